-- The drain's hot statements get the same plan whatever the table's statistics say.
--
-- Migration 0002 priced sorts, bitmap scans and sequential scans out of the claim, which
-- is enough on a table that was never analyzed. Once it has statistics (autovacuum
-- analyzes any busy table), the planner estimates `LIMIT p_limit` at a tenth of the
-- pending rows, and for a few thousand candidates it prefers to hash them against a full
-- scan of the primary key: one claim of 100 then reads every row of the table (measured:
-- 201,798 buffers for a claim of 100 on an analyzed 200,000-row table, against 943 with
-- the settings below). With hash and merge joins priced out, the only join left is a
-- nested loop, and its cheapest inner side is one primary-key lookup per candidate, so a
-- claim costs its batch whatever the estimates.
--
-- Completion and renewal had the mirror problem: on a small analyzed table the planner
-- seq-scans the whole table to find the 100 rows of a batch (a plain prepared statement
-- cannot carry planner settings). They move into functions with the same settings, in
-- PL/pgSQL so that each connection plans them once and reuses the plan (an SQL function
-- is planned again on every call, about a millisecond for these statements). Sorts stay
-- allowed there: the batch is sorted by id so that two batches lock rows in the same
-- order, and the only plan that avoids that sort of 100 rows walks the whole primary key.
--
-- JIT compilation is off in all three. The settings above price the whole-table plans out
-- by adding a large constant to their cost, and on a big analyzed table even the chosen
-- plan is estimated above `jit_above_cost`: the server then compiles the statement's
-- expressions with LLVM on every call, which cost 20-75 ms against the 1-4 ms of the claim
-- itself (measured on an analyzed table of a million pending rows). A batch of 100 rows
-- never earns that back.
--
-- With hash joins gone, a join of two CTEs would be a nested loop of batch × batch, so
-- neither function joins one CTE to another: the locked rows carry the request's columns
-- and whether they may be written, and the refused rows are the locked ones that may not.
ALTER FUNCTION {schema_prefix}"{name}_claim"(
    timestamptz, text, bigint, text, bigint, boolean, boolean)
    SET enable_hashjoin = off
    SET enable_mergejoin = off
    SET jit = off;

-- Records many claimed transitions at once. Parameter arrays, one element per completion:
-- id, owner, token, status, next retry time, attempt count, last error, dead-letter reason,
-- delivery time, whether to stamp the delivery time with the transition time, provider
-- message id, transition time (NULL: database clock), and the stamp the write leaves
-- (chosen by the request, so a retry can recognise its own write).
--
-- The target rows are locked first, in id order (so two batches cannot deadlock), and
-- each claim is judged on its locked row, which under READ COMMITTED is the newest
-- committed version: it may be written if it is not terminal and still holds the claim's
-- owner and token. Nobody can change a locked row before this statement ends, so the
-- judgement and the write are one atomic step, and every locked row is either written or
-- refused. Each comes back once: `applied` says whether this call wrote it; a row that is
-- not returned does not exist. A written row comes back with only the columns the write
-- set (the caller holds the rest in its claim: they never change after enqueue, or are
-- cleared by every completion), so a batch's reply does not carry its payloads back; a
-- refused row comes back whole, as the durable state that refused the write.
CREATE FUNCTION {schema_prefix}"{name}_complete_batch"(
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

-- Extends the leases of many claims at once: ids, owners and tokens (one element per
-- claim), now (NULL: database clock) and the new lease in microseconds. Locking and
-- judging as in the completion: only rows that are not terminal and still hold the
-- claim's owner and token are extended; every locked row comes back once, whole, with
-- `applied` saying whether it was extended.
CREATE FUNCTION {schema_prefix}"{name}_renew"(
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
