-- Records many claimed transitions in one statement. Parameter arrays, one element per
-- completion: $1 id, $2 owner, $3 token, $4 status, $5 next_retry_at, $6 attempt_count,
-- $7 last_error, $8 dead_letter_reason, $9 delivered_at, $10 stamp delivered_at with the
-- transition time, $11 provider_message_id, $12 transition time (NULL: database clock).
--
-- The target rows are locked first, in id order (so two batches cannot deadlock), and
-- the claim is judged on the locked row, which under READ COMMITTED is the newest
-- committed version. The UPDATE writes only rows whose locked version is not terminal and
-- still holds the claim's owner and token; nobody can change a locked row before this
-- statement ends, so the check and the write are one atomic step. Every locked row comes
-- back once: `applied` says whether this statement wrote it; a row that is not returned
-- does not exist.
WITH input AS MATERIALIZED (
    SELECT *
    FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::smallint[], $5::timestamptz[],
                $6::integer[], $7::text[], $8::text[], $9::timestamptz[], $10::boolean[],
                $11::text[], $12::timestamptz[])
        AS i(id, owner, token, status, next_retry_at, attempt_count, last_error,
             dead_letter_reason, delivered_at, stamp_delivered_now, provider_message_id, at)
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
    SET status = i.status,
        next_retry_at = i.next_retry_at,
        attempt_count = i.attempt_count,
        last_error = i.last_error,
        dead_letter_reason = i.dead_letter_reason,
        delivered_at = CASE WHEN i.stamp_delivered_now THEN COALESCE(i.at, now())
                            ELSE i.delivered_at END,
        provider_message_id = i.provider_message_id,
        updated_at = COALESCE(i.at, now()),
        claim_owner = NULL,
        claim_token = NULL,
        claimed_at = NULL,
        claim_expires_at = NULL,
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
