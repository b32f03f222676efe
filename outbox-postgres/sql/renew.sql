-- Extends the leases of many claims in one statement. $1 ids, $2 owners, $3 tokens (one
-- element per claim), $4 now (NULL: database clock), $5 new lease in microseconds.
-- Locking and judging as in complete_batch.sql: only rows that are not terminal and still
-- hold the claim's owner and token are extended; every locked row comes back once, with
-- `applied` saying whether it was extended.
WITH input AS MATERIALIZED (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::uuid[]) AS i(id, owner, token)
),
locked AS MATERIALIZED (
    SELECT t.*
    FROM {table} AS t
    JOIN input AS i ON i.id = t.id
    ORDER BY t.id
    FOR UPDATE OF t
),
updated AS (
    UPDATE {table} AS t
    SET claim_expires_at = COALESCE($4::timestamptz, now()) + $5::bigint * interval '1 microsecond',
        stamp = gen_random_uuid()
    FROM input AS i, locked AS l
    WHERE t.id = i.id
      AND l.id = i.id
      AND l.status NOT IN (1, 5)
      AND l.claim_owner = i.owner
      AND l.claim_token = i.token
    RETURNING t.*
)
SELECT u.*, true AS applied FROM updated AS u
UNION ALL
SELECT l.*, false AS applied FROM locked AS l
WHERE NOT EXISTS (SELECT 1 FROM updated AS u WHERE u.id = l.id)
