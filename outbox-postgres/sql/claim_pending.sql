-- Leases up to $3 claimable pending rows in pending order, in one statement.
-- $1 now (NULL: the database clock), $2 topic filter (NULL: every topic), $3 batch size,
-- $4 owner, $5 lease in microseconds. The CTE is materialized so its LIMIT and its row
-- locks are taken exactly once; rows another transaction holds are skipped, not waited
-- for. The UPDATE re-checks eligibility on the locked row version; its status check is
-- written against the candidate's status (equal, as the row is locked) rather than the
-- literal, so the planner joins through the primary key instead of scanning every
-- claimable row through the partial index for a hash join. Rows come back in no
-- particular order: the store sorts them by (created_at, id).
WITH candidates AS MATERIALIZED (
    SELECT id, status
    FROM {table}
    WHERE status = 0
      AND (not_before IS NULL OR not_before <= COALESCE($1::timestamptz, now()))
      AND (claim_expires_at IS NULL OR claim_expires_at <= COALESCE($1::timestamptz, now()))
      AND ($2::text IS NULL OR topic = $2::text)
    ORDER BY created_at, id
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
  AND (t.not_before IS NULL OR t.not_before <= COALESCE($1::timestamptz, now()))
  AND (t.claim_expires_at IS NULL OR t.claim_expires_at <= COALESCE($1::timestamptz, now()))
RETURNING t.*
