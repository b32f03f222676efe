-- A batch of completions in one statement (sql/complete_batch.sql calls it): each row is
-- locked, judged against the caller's owner and token, and written only when the
-- claim still holds. Its plan is pinned so that it costs its batch whatever the table's
-- statistics.

CREATE OR REPLACE FUNCTION {schema_prefix}"{name}_complete_batch"(
    p_id uuid[], p_owner text[], p_token uuid[], p_status smallint[],
    p_next_retry_at timestamptz[], p_attempt_count integer[], p_last_error text[],
    p_dead_letter_reason text[], p_delivered_at timestamptz[],
    p_stamp_delivered_now boolean[], p_provider_message_id text[], p_at timestamptz[],
    p_stamp uuid[])
RETURNS TABLE (
    id uuid, applied boolean, topic text, partition_key text, payload bytea,
    headers jsonb, status smallint, created_at timestamptz, updated_at timestamptz,
    not_before timestamptz, next_retry_at timestamptz, attempt_count integer,
    last_error text, dead_letter_reason text, delivered_at timestamptz,
    provider_message_id text, claim_owner text, claim_token uuid, claimed_at timestamptz,
    claim_expires_at timestamptz, claim_attempt_count integer, stamp uuid)
LANGUAGE plpgsql
VOLATILE
SET enable_seqscan = off
SET enable_bitmapscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
SET jit = off
AS $complete$
#variable_conflict use_column
BEGIN
RETURN QUERY
WITH input AS MATERIALIZED (
    SELECT *
    FROM unnest(p_id, p_owner, p_token, p_status, p_next_retry_at, p_attempt_count,
                p_last_error, p_dead_letter_reason, p_delivered_at, p_stamp_delivered_now,
                p_provider_message_id, p_at, p_stamp)
        AS i(id, owner, token, status, next_retry_at, attempt_count, last_error,
             dead_letter_reason, delivered_at, stamp_delivered_now, provider_message_id, at,
             stamp)
),
locked AS MATERIALIZED (
    SELECT t.*,
           COALESCE(t.status NOT IN (1, 5) AND t.claim_owner = i.owner
                    AND t.claim_token = i.token, false) AS writable,
           i.status AS new_status, i.next_retry_at AS new_next_retry_at,
           i.attempt_count AS new_attempt_count, i.last_error AS new_last_error,
           i.dead_letter_reason AS new_dead_letter_reason,
           CASE WHEN i.stamp_delivered_now THEN COALESCE(i.at, now())
                ELSE i.delivered_at END AS new_delivered_at,
           i.provider_message_id AS new_provider_message_id,
           COALESCE(i.at, now()) AS new_updated_at, i.stamp AS new_stamp
    FROM input AS i
    JOIN {table} AS t ON t.id = i.id
    ORDER BY t.id
    FOR UPDATE OF t
),
updated AS (
    UPDATE {table} AS t
    SET status = l.new_status,
        next_retry_at = l.new_next_retry_at,
        attempt_count = l.new_attempt_count,
        last_error = l.new_last_error,
        dead_letter_reason = l.new_dead_letter_reason,
        delivered_at = l.new_delivered_at,
        provider_message_id = l.new_provider_message_id,
        updated_at = l.new_updated_at,
        claim_owner = NULL,
        claim_token = NULL,
        claimed_at = NULL,
        claim_expires_at = NULL,
        stamp = l.new_stamp
    FROM locked AS l
    WHERE t.id = l.id
      AND l.writable
    RETURNING t.id, t.status, t.updated_at, t.next_retry_at, t.attempt_count, t.last_error,
              t.dead_letter_reason, t.delivered_at, t.provider_message_id, t.stamp
)
SELECT u.id, true, NULL::text, NULL::text, NULL::bytea, NULL::jsonb, u.status,
       NULL::timestamptz, u.updated_at, NULL::timestamptz, u.next_retry_at,
       u.attempt_count, u.last_error, u.dead_letter_reason, u.delivered_at,
       u.provider_message_id, NULL::text, NULL::uuid, NULL::timestamptz,
       NULL::timestamptz, NULL::integer, u.stamp
FROM updated AS u
UNION ALL
SELECT l.id, false, l.topic, l.partition_key, l.payload, l.headers, l.status,
       l.created_at, l.updated_at, l.not_before, l.next_retry_at, l.attempt_count,
       l.last_error, l.dead_letter_reason, l.delivered_at, l.provider_message_id,
       l.claim_owner, l.claim_token, l.claimed_at, l.claim_expires_at,
       l.claim_attempt_count, l.stamp
FROM locked AS l
WHERE NOT l.writable;
END
$complete$;
