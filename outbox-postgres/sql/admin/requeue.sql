-- Makes entries of one status (3 failed or 5 dead-lettered) pending again with a fresh
-- attempt budget; the last error is kept. $1 time (NULL: the database's clock), $2 one id
-- (NULL: all), $3 the status, $4 one topic (NULL: every topic). Rows a worker holds
-- locked are skipped, not waited for.
WITH chosen AS MATERIALIZED (
    SELECT id FROM {table}
    WHERE status = $3::smallint AND ($2::uuid IS NULL OR id = $2::uuid)
      AND ($4::text IS NULL OR topic = $4::text)
    FOR UPDATE SKIP LOCKED
)
UPDATE {table} AS t
SET status = 0,
    attempt_count = 0,
    next_retry_at = NULL,
    dead_letter_reason = NULL,
    claim_owner = NULL,
    claim_token = NULL,
    claimed_at = NULL,
    claim_expires_at = NULL,
    updated_at = COALESCE($1::timestamptz, now()),
    stamp = gen_random_uuid()
FROM chosen AS c
WHERE t.id = c.id AND t.status = $3::smallint
