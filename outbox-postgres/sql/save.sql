-- Writes the outcome fields of one entry if its stamp is still the durable one, in one
-- statement. $1 id, $2 expected stamp, $3 status, $4 next_retry_at, $5 attempt_count,
-- $6 last_error, $7 dead_letter_reason, $8 delivered_at, $9 provider_message_id,
-- $10 now (NULL: database clock). The row is locked and judged on its newest version;
-- it comes back once (with `applied`), or not at all when it does not exist.
WITH locked AS MATERIALIZED (
    SELECT * FROM {table} WHERE id = $1::uuid FOR UPDATE
),
updated AS (
    UPDATE {table} AS t
    SET status = $3::smallint,
        next_retry_at = $4::timestamptz,
        attempt_count = $5::integer,
        last_error = $6::text,
        dead_letter_reason = $7::text,
        delivered_at = $8::timestamptz,
        provider_message_id = $9::text,
        updated_at = COALESCE($10::timestamptz, now()),
        claim_owner = NULL,
        claim_token = NULL,
        claimed_at = NULL,
        claim_expires_at = NULL,
        stamp = gen_random_uuid()
    FROM locked AS l
    WHERE t.id = l.id
      AND l.status NOT IN (1, 5)
      AND l.stamp = $2::uuid
    RETURNING t.*
)
SELECT u.*, true AS applied FROM updated AS u
UNION ALL
SELECT l.*, false AS applied FROM locked AS l
WHERE NOT EXISTS (SELECT 1 FROM updated)
