-- Leases up to ?5 claimable rows in one statement: retry-ready rows first (deferred or
-- retryable failures whose time has come, in retry order), then pending rows (in pending
-- order) up to ?5 together. ?6 takes retry-ready rows, ?7 pending ones.
-- ?1 owner, ?2 now (µs), ?3 lease expiry (µs), ?4 topic or NULL, ?5 batch size; ?8 the
-- slice count and ?9 the slice index. The lines naming the slice hash are left out of the
-- statement that claims from every slice (statements.rs renders both).
--
-- Each group walks its partial index in claim order and stops after the batch: the retry
-- walk is bounded above by the claim time (its index key is the retry time), so retries
-- parked for later are never visited, however many there are, and nothing is sorted. The
-- outer WHERE re-checks everything the walks chose on (inside the write transaction
-- nothing can change in between, but the statement does not rely on it). The walks hand
-- the update rowids, which reach each row directly (an id would go through the primary
-- key's index first). Rows come back in no particular order.
WITH retry AS MATERIALIZED (
    SELECT rowid AS rid FROM {table} AS t
    WHERE ?6
      AND status IN (2, 4)
      AND coalesce(next_retry_at, updated_at) <= ?2
      AND (next_retry_at IS NULL OR next_retry_at <= ?2)
      AND (claim_expires_at IS NULL OR claim_expires_at <= ?2)
      AND (?4 IS NULL OR topic = ?4)
      AND {slice_hash} % ?8 = ?9
    ORDER BY coalesce(next_retry_at, updated_at), id
    LIMIT ?5
),
pending AS MATERIALIZED (
    SELECT rowid AS rid FROM {table} AS t
    WHERE ?7
      AND status = 0
      AND (not_before IS NULL OR not_before <= ?2)
      AND (claim_expires_at IS NULL OR claim_expires_at <= ?2)
      AND (?4 IS NULL OR topic = ?4)
      AND {slice_hash} % ?8 = ?9
    ORDER BY created_at, id
    LIMIT ?5 - (SELECT count(*) FROM retry)
)
UPDATE {table}
SET claim_owner = ?1,
    claim_token = randomblob(16),
    claimed_at = ?2,
    claim_expires_at = ?3,
    -- Capped, so a count edited out of range by hand cannot overflow the statement:
    -- the row is read back and reported as corrupt instead.
    claim_attempt_count = min(claim_attempt_count, 4294967295) + 1,
    stamp = randomblob(16)
WHERE rowid IN (SELECT rid FROM retry UNION ALL SELECT rid FROM pending)
  AND (claim_expires_at IS NULL OR claim_expires_at <= ?2)
  AND (?4 IS NULL OR topic = ?4)
  AND CASE WHEN status = 0 THEN not_before IS NULL OR not_before <= ?2
           WHEN status IN (2, 4) THEN next_retry_at IS NULL OR next_retry_at <= ?2
           ELSE 0
      END
RETURNING *
