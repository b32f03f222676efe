-- Leases up to ?5 retry-ready rows (deferred or retryable failure whose retry time has
-- come) in retry order, walking the retry partial index.
-- ?1 owner, ?2 now (µs), ?3 lease expiry (µs), ?4 topic or NULL, ?5 batch size.
UPDATE {table}
SET claim_owner = ?1,
    claim_token = randomblob(16),
    claimed_at = ?2,
    claim_expires_at = ?3,
    claim_attempt_count = claim_attempt_count + 1,
    stamp = randomblob(16)
WHERE id IN (
        SELECT id FROM {table}
        WHERE status IN (2, 4)
          AND (next_retry_at IS NULL OR next_retry_at <= ?2)
          AND (claim_expires_at IS NULL OR claim_expires_at <= ?2)
          AND (?4 IS NULL OR topic = ?4)
        ORDER BY coalesce(next_retry_at, updated_at), id
        LIMIT ?5)
  AND status IN (2, 4)
  AND (claim_expires_at IS NULL OR claim_expires_at <= ?2)
RETURNING *
