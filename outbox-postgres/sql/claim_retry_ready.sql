-- Leases up to $3 retry-ready rows (deferred or retryable failure, retry time reached) in
-- retry order, in one statement; parameters, locking and the re-check as in
-- claim_pending.sql. The
-- ORDER BY matches the partial retry index. The store sorts the returned rows by
-- (COALESCE(next_retry_at, updated_at), id), which a claim does not change.
WITH candidates AS MATERIALIZED (
    SELECT id, status
    FROM {table}
    WHERE status IN (2, 4)
      AND (next_retry_at IS NULL OR next_retry_at <= COALESCE($1::timestamptz, now()))
      AND (claim_expires_at IS NULL OR claim_expires_at <= COALESCE($1::timestamptz, now()))
      AND ($2::text IS NULL OR topic = $2::text)
    ORDER BY COALESCE(next_retry_at, updated_at), id
    LIMIT $3::bigint
    FOR UPDATE SKIP LOCKED
)
UPDATE {table} AS t
SET claim_owner = $4::text,
    claim_token = gen_random_uuid(),
    claimed_at = COALESCE($1::timestamptz, now()),
    claim_expires_at = COALESCE($1::timestamptz, now()) + $5::bigint * interval '1 microsecond',
    claim_attempt_count = t.claim_attempt_count + 1,
    stamp = gen_random_uuid()
FROM candidates AS c
WHERE t.id = c.id
  AND t.status = c.status
  AND (t.next_retry_at IS NULL OR t.next_retry_at <= COALESCE($1::timestamptz, now()))
  AND (t.claim_expires_at IS NULL OR t.claim_expires_at <= COALESCE($1::timestamptz, now()))
RETURNING t.*
