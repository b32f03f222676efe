-- A batch of completions in one statement (sql/complete_batch.sql calls it): each row is
-- written only when the caller's claim still holds it (not terminal, same owner, same
-- token), and every row of the batch the table has comes back once with `applied`. Its
-- plans are pinned so that it costs its batch whatever the table's statistics.
--
-- Revision 2: the write comes first. Revision 1 locked and read every row of the batch
-- (payloads included), judged it, then wrote it: each row was found and locked twice.
-- Now one update takes the batch in id order (the input is sorted and walked first, so
-- two batches that share rows lock them in the same order) and judges each row as it
-- locks it, after any writer it waited on. Only when it wrote fewer rows than the batch
-- has does a second statement read the others, to say why: without a lock (a lock taken
-- after the write would break the one order and could close a circle with another
-- batch), and, under READ COMMITTED as the store runs it, with a snapshot of its own
-- taken after the update, so it sees the writers the update waited on. The rows this
-- call wrote are the ones whose version is this transaction's and carries the request's
-- stamp (when it wrote none, no transaction id is asked for); a row an earlier attempt
-- of the same request wrote carries the stamp too, and is read (and judged applied by
-- its caller).
-- One generic plan per connection (plan_cache_mode), as the claims.
-- Revision 3: on a table prepared for per-key order, the completion moves its keys' heads
-- itself, once per batch. While it writes, a setting local to its transaction
-- (outbox.completion_moves_heads) tells the status trigger not to run for the rows it
-- finishes (migrations/0012); then one statement, with a snapshot taken after the write,
-- moves the head of every key whose row it finished was its head, as the trigger's function
-- does for one key (definitions/keep_heads.sql): a locking read of the key's first
-- unfinished row, the flags behind it cleared, its own set. The flag read is the one the
-- write left, which is the row's latest (a write that waited on another transaction's
-- head move sees the flag it set), and a row behind its head moves nothing, as with the
-- trigger (migrations/0011: two recordings of one key's run never wait on each other).
-- One statement per batch instead of a PL/pgSQL call per delivered head. A table never
-- prepared has no trigger and no flag to move, and the statement is not run.

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
DECLARE
    written bigint;
    moves_heads boolean := EXISTS (
        SELECT 1 FROM pg_trigger
        WHERE tgrelid = '{table}'::regclass AND tgname = '{name}_heads_after_status');
BEGIN
IF moves_heads THEN
    PERFORM set_config('outbox.completion_moves_heads', 'on', true);
END IF;
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
    FROM input AS i
    WHERE t.id = i.id
      AND t.status NOT IN (1, 5)
      AND t.claim_owner = i.owner
      AND t.claim_token = i.token
    RETURNING t.id, t.status, t.updated_at, t.next_retry_at, t.attempt_count, t.last_error,
              t.dead_letter_reason, t.delivered_at, t.provider_message_id, t.stamp
)
SELECT u.id, true, NULL::text, NULL::text, NULL::bytea, NULL::jsonb, u.status,
       NULL::timestamptz, u.updated_at, NULL::timestamptz, u.next_retry_at,
       u.attempt_count, u.last_error, u.dead_letter_reason, u.delivered_at,
       u.provider_message_id, NULL::text, NULL::uuid, NULL::timestamptz,
       NULL::timestamptz, NULL::integer, u.stamp
FROM updated AS u;

GET DIAGNOSTICS written = ROW_COUNT;
IF moves_heads THEN
    PERFORM set_config('outbox.completion_moves_heads', '', true);
END IF;
IF written < cardinality(p_id) THEN
    RETURN QUERY
    SELECT t.id, false, t.topic, t.partition_key, t.payload, t.headers, t.status,
           t.created_at, t.updated_at, t.not_before, t.next_retry_at, t.attempt_count,
           t.last_error, t.dead_letter_reason, t.delivered_at, t.provider_message_id,
           t.claim_owner, t.claim_token, t.claimed_at, t.claim_expires_at,
           t.claim_attempt_count, t.stamp
    FROM unnest(p_id, p_stamp) AS i(id, stamp)
    JOIN {table} AS t ON t.id = i.id
    WHERE written = 0 OR NOT (t.stamp = i.stamp AND t.xmin = pg_current_xact_id()::xid);
END IF;
IF written > 0 AND moves_heads THEN
    WITH finished AS MATERIALIZED (
        SELECT DISTINCT t.partition_key
        FROM unnest(p_id, p_status, p_stamp) AS i(id, status, stamp)
        JOIN {table} AS t ON t.id = i.id
        WHERE i.status IN (1, 5) AND t.partition_key IS NOT NULL AND t.is_head
          AND t.stamp = i.stamp AND t.xmin = pg_current_xact_id()::xid
    ),
    heads AS MATERIALIZED (
        SELECT h.id, h.partition_key, h.created_at
        FROM finished AS f
        CROSS JOIN LATERAL (
            SELECT n.id, n.partition_key, n.created_at
            FROM {table} AS n
            WHERE n.partition_key = f.partition_key AND n.status NOT IN (1, 5)
            ORDER BY n.created_at, n.id
            LIMIT 1
            FOR SHARE OF n) AS h
    ),
    cleared AS (
        UPDATE {table} AS t SET is_head = false
        FROM heads AS h
        WHERE t.partition_key = h.partition_key AND t.is_head AND t.status NOT IN (1, 5)
          AND (t.created_at > h.created_at OR (t.created_at = h.created_at AND t.id > h.id))
    )
    UPDATE {table} AS t SET is_head = true
    FROM heads AS h
    WHERE t.id = h.id AND NOT t.is_head;
END IF;
END
$complete$;
