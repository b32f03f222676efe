-- A batch of completions in one statement (sql/complete_batch.sql calls it): each row is
-- written only when the caller's claim still holds it (not terminal, same owner, same
-- token), and every row of the batch the table has comes back once with `applied`. Its
-- plan is pinned so that it costs its batch whatever the table's statistics.
--
-- Revision 2: the write comes first. Revision 1 locked and read every row of the batch
-- (payloads included), judged it, then wrote it: each row was found and locked twice.
-- Now one update takes the batch in id order (the order every completion locks in, so
-- two batches sharing rows never wait on each other in a circle) and judges each row as
-- it locks it, after any writer it waited on. Only when it wrote fewer rows than the
-- batch has does the same statement lock the rest, in id order, and return their whole
-- rows as they are now, from which a refused completion is judged. One generic plan for
-- the session (plan_cache_mode), as the claims.

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
SET plan_cache_mode = force_generic_plan
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
    ORDER BY i.id
),
updated AS MATERIALIZED (
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
    FROM input AS i
    WHERE t.id = i.id
      AND t.status NOT IN (1, 5)
      AND t.claim_owner = i.owner
      AND t.claim_token = i.token
    RETURNING t.id, t.status, t.updated_at, t.next_retry_at, t.attempt_count, t.last_error,
              t.dead_letter_reason, t.delivered_at, t.provider_message_id, t.stamp
),
-- The rows not written, locked and read as they are now. The written ids are gathered
-- once into an array, and nothing is read when every row of the batch was written (both
-- conditions are evaluated once, before any row): no join of two CTEs, which without
-- hash joins would cost the batch times itself.
written AS MATERIALIZED (
    SELECT count(*) AS n, COALESCE(array_agg(u.id), '{}') AS ids FROM updated AS u
),
refused AS MATERIALIZED (
    SELECT t.*
    FROM input AS i
    JOIN {table} AS t ON t.id = i.id
    WHERE (SELECT w.n FROM written AS w) < cardinality(p_id)
      AND i.id <> ALL ((SELECT w.ids FROM written AS w)::uuid[])
    ORDER BY t.id
    FOR UPDATE OF t
)
SELECT u.id, true, NULL::text, NULL::text, NULL::bytea, NULL::jsonb, u.status,
       NULL::timestamptz, u.updated_at, NULL::timestamptz, u.next_retry_at,
       u.attempt_count, u.last_error, u.dead_letter_reason, u.delivered_at,
       u.provider_message_id, NULL::text, NULL::uuid, NULL::timestamptz,
       NULL::timestamptz, NULL::integer, u.stamp
FROM updated AS u
UNION ALL
SELECT r.id, false, r.topic, r.partition_key, r.payload, r.headers, r.status,
       r.created_at, r.updated_at, r.not_before, r.next_retry_at, r.attempt_count,
       r.last_error, r.dead_letter_reason, r.delivered_at, r.provider_message_id,
       r.claim_owner, r.claim_token, r.claimed_at, r.claim_expires_at,
       r.claim_attempt_count, r.stamp
FROM refused AS r;
END
$complete$;
