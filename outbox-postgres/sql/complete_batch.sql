-- Records many claimed transitions in one statement. Parameter arrays, one element per
-- completion: $1 id, $2 owner, $3 token, $4 status, $5 next_retry_at, $6 attempt_count,
-- $7 last_error, $8 dead_letter_reason, $9 delivered_at, $10 stamp delivered_at with the
-- transition time, $11 provider_message_id, $12 transition time (NULL: database clock),
-- $13 the stamp the write leaves (chosen by the request, so a retry can know its own write).
--
-- The target rows are locked first, in id order (so two batches cannot deadlock), and
-- the claim is judged on the locked row, which under READ COMMITTED is the newest
-- committed version. The UPDATE writes only rows whose locked version is not terminal and
-- still holds the claim's owner and token; nobody can change a locked row before this
-- statement ends, so the check and the write are one atomic step. Every locked row comes
-- back once: `applied` says whether this statement wrote it; a row that is not returned
-- does not exist. A written row comes back with only the columns this statement set (the
-- caller holds the rest in its claim: they never change after enqueue, or are cleared by
-- every completion), so a batch's reply does not carry its payloads back; a refused row
-- comes back whole, as the durable state that refused the write.
WITH input AS MATERIALIZED (
    SELECT *
    FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::smallint[], $5::timestamptz[],
                $6::integer[], $7::text[], $8::text[], $9::timestamptz[], $10::boolean[],
                $11::text[], $12::timestamptz[], $13::uuid[])
        AS i(id, owner, token, status, next_retry_at, attempt_count, last_error,
             dead_letter_reason, delivered_at, stamp_delivered_now, provider_message_id, at,
             stamp)
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
        stamp = i.stamp
    FROM input AS i, locked AS l
    WHERE t.id = i.id
      AND l.id = i.id
      AND l.status NOT IN (1, 5)
      AND l.claim_owner = i.owner
      AND l.claim_token = i.token
    RETURNING t.id, t.status, t.updated_at, t.next_retry_at, t.attempt_count, t.last_error,
              t.dead_letter_reason, t.delivered_at, t.provider_message_id, t.stamp
)
SELECT u.id, true AS applied, u.status, u.updated_at, u.next_retry_at, u.attempt_count,
       u.last_error, u.dead_letter_reason, u.delivered_at, u.provider_message_id, u.stamp,
       NULL::text AS topic, NULL::text AS partition_key, NULL::bytea AS payload,
       NULL::jsonb AS headers, NULL::timestamptz AS created_at,
       NULL::timestamptz AS not_before, NULL::text AS claim_owner, NULL::uuid AS claim_token,
       NULL::timestamptz AS claimed_at, NULL::timestamptz AS claim_expires_at,
       NULL::integer AS claim_attempt_count
FROM updated AS u
UNION ALL
SELECT l.id, false AS applied, l.status, l.updated_at, l.next_retry_at, l.attempt_count,
       l.last_error, l.dead_letter_reason, l.delivered_at, l.provider_message_id, l.stamp,
       l.topic, l.partition_key, l.payload, l.headers, l.created_at, l.not_before,
       l.claim_owner, l.claim_token, l.claimed_at, l.claim_expires_at, l.claim_attempt_count
FROM locked AS l
WHERE NOT EXISTS (SELECT 1 FROM updated AS u WHERE u.id = l.id)
