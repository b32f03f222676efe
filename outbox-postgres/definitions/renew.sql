-- Lease renewal of many claims in one statement (sql/renew.sql calls it): only rows whose
-- owner and token still match get the new expiry.

CREATE OR REPLACE FUNCTION {schema_prefix}"{name}_renew"(
    p_id uuid[], p_owner text[], p_token uuid[], p_now timestamptz, p_lease_us bigint)
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
AS $renew$
#variable_conflict use_column
BEGIN
RETURN QUERY
WITH input AS MATERIALIZED (
    SELECT * FROM unnest(p_id, p_owner, p_token) AS i(id, owner, token)
),
locked AS MATERIALIZED (
    SELECT t.*,
           COALESCE(t.status NOT IN (1, 5) AND t.claim_owner = i.owner
                    AND t.claim_token = i.token, false) AS writable
    FROM input AS i
    JOIN {table} AS t ON t.id = i.id
    ORDER BY t.id
    FOR UPDATE OF t
),
updated AS (
    UPDATE {table} AS t
    SET claim_expires_at = COALESCE(p_now, now()) + p_lease_us * interval '1 microsecond',
        stamp = gen_random_uuid()
    FROM locked AS l
    WHERE t.id = l.id
      AND l.writable
    RETURNING t.id, t.topic, t.partition_key, t.payload, t.headers, t.status,
              t.created_at, t.updated_at, t.not_before, t.next_retry_at, t.attempt_count,
              t.last_error, t.dead_letter_reason, t.delivered_at, t.provider_message_id,
              t.claim_owner, t.claim_token, t.claimed_at, t.claim_expires_at,
              t.claim_attempt_count, t.stamp
)
SELECT u.id, true, u.topic, u.partition_key, u.payload, u.headers, u.status,
       u.created_at, u.updated_at, u.not_before, u.next_retry_at, u.attempt_count,
       u.last_error, u.dead_letter_reason, u.delivered_at, u.provider_message_id,
       u.claim_owner, u.claim_token, u.claimed_at, u.claim_expires_at,
       u.claim_attempt_count, u.stamp
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
$renew$;
