-- The claim in per-key order that sql/claim_ordered.sql calls: of each key its head
-- (is_head, kept by the head trigger and the batch completion) while none of the key's
-- first rows holds a live lease,
-- and behind each head its run: the rows right after it in key order while each is
-- pending, due and of the claim's topic, up to p_run rows with the head. Keyless rows as
-- the plain claim takes them. p_slices and p_slice restrict it to one slice (NULL: every
-- slice). The batch (p_limit) bounds the rows taken, runs included: heads in claim order
-- (retry-ready first), each followed by its run, until the batch is full; heads past the
-- last one used are neither read nor locked.
--
-- Only heads are locked while they are chosen (FOR UPDATE SKIP LOCKED): another claimer
-- skips a locked head, and a row behind a head is never a head, so no other claim reaches
-- a run's rows but through their head. The update locks the run's rows as it writes them.
-- Plans pinned as the plain claim's: the walks and each run's one range of the key order
-- index are bounded by the batch whatever the statistics.
-- Revision 2: PL/pgSQL with one generic plan, as the plain claim (definitions/claim.sql):
-- planned once per session instead of at every call.
-- Revision 3: the batch is cut from a walk of heads each followed by its run, which stops
-- pulling heads once it holds the batch. Revision 2 took (and locked) up to p_limit heads
-- and built every one's run before cutting: with keys of long backlogs, ten times the
-- heads and runs a batch of runs of ten uses, and heads locked that other claimers then
-- skipped.
-- Revision 4: the walk for pending heads starts at the key the caller learned
-- (p_from_created, p_from_id) and, when that walk comes up short and p_behind allows,
-- walks the part before it, as the plain claim does (outbox_core::ClaimStarts). Every
-- delivered head leaves an index entry at the beginning of the heads' index until vacuum
-- removes it, and a walk from the beginning steps over all of them. Measured at 100,000
-- keys of one entry each, half of them delivered (claims of 100, warm): a walk from the
-- beginning found its first head after 0.5 to 0.7 ms (1.7 ms cold) and took 1.1 to
-- 1.4 ms, a walk from the start 0.03 ms and 0.6 ms. The ten-parameter form, which the
-- previous release calls, is the claim with no start.

CREATE OR REPLACE FUNCTION {schema_prefix}"{name}_claim_runs"(
    p_now timestamptz, p_topic text, p_limit bigint, p_owner text, p_lease_us bigint,
    p_retry boolean, p_pending boolean, p_from_created timestamptz, p_from_id uuid,
    p_behind boolean, p_slices bigint, p_slice bigint, p_run bigint)
RETURNS SETOF {table}
LANGUAGE plpgsql
VOLATILE
SET enable_sort = off
SET enable_bitmapscan = off
SET enable_seqscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
SET jit = off
SET plan_cache_mode = force_generic_plan
AS $claim$
BEGIN
RETURN QUERY
WITH retry AS MATERIALIZED (
    SELECT t.id, t.partition_key, t.created_at, 0 AS grp,
           COALESCE(t.next_retry_at, t.updated_at) AS at
    FROM {table} AS t
    WHERE p_retry
      AND t.status IN (2, 4)
      AND (t.partition_key IS NULL OR t.is_head)
      AND COALESCE(t.next_retry_at, t.updated_at) <= COALESCE(p_now, now())
      AND (t.next_retry_at IS NULL OR t.next_retry_at <= COALESCE(p_now, now()))
      AND (t.claim_expires_at IS NULL OR t.claim_expires_at <= COALESCE(p_now, now()))
      AND (p_topic IS NULL OR t.topic = p_topic)
      AND (p_slices IS NULL
           OR COALESCE(t.slice_hash, {schema_prefix}"{name}_slice_hash"(t.partition_key, t.id))
              % p_slices = p_slice)
      AND (t.partition_key IS NULL OR (
          t.id = (SELECT f.id
                  FROM {table} AS f
                  WHERE f.partition_key = t.partition_key AND f.status NOT IN (1, 5)
                  ORDER BY f.created_at, f.id
                  LIMIT 1)
          AND NOT EXISTS (
              SELECT 1
              FROM (SELECT l.claim_expires_at
                    FROM {table} AS l
                    WHERE l.partition_key = t.partition_key AND l.status NOT IN (1, 5)
                    ORDER BY l.created_at, l.id
                    LIMIT 8) AS first_rows
              WHERE first_rows.claim_expires_at > COALESCE(p_now, now()))))
    ORDER BY COALESCE(t.next_retry_at, t.updated_at), t.id
    LIMIT GREATEST(p_limit, 0)
    FOR UPDATE OF t SKIP LOCKED
),
ahead AS MATERIALIZED (
    SELECT t.id, t.partition_key, t.created_at, 1 AS grp, t.created_at AS at
    FROM {table} AS t
    WHERE p_pending
      AND t.status = 0
      AND (t.partition_key IS NULL OR t.is_head)
      AND (t.created_at, t.id) >= (COALESCE(p_from_created, '-infinity'),
                                   COALESCE(p_from_id, '00000000-0000-0000-0000-000000000000'))
      AND (t.not_before IS NULL OR t.not_before <= COALESCE(p_now, now()))
      AND (t.claim_expires_at IS NULL OR t.claim_expires_at <= COALESCE(p_now, now()))
      AND (p_topic IS NULL OR t.topic = p_topic)
      AND (p_slices IS NULL
           OR COALESCE(t.slice_hash, {schema_prefix}"{name}_slice_hash"(t.partition_key, t.id))
              % p_slices = p_slice)
      AND (t.partition_key IS NULL OR (
          t.id = (SELECT f.id
                  FROM {table} AS f
                  WHERE f.partition_key = t.partition_key AND f.status NOT IN (1, 5)
                  ORDER BY f.created_at, f.id
                  LIMIT 1)
          AND NOT EXISTS (
              SELECT 1
              FROM (SELECT l.claim_expires_at
                    FROM {table} AS l
                    WHERE l.partition_key = t.partition_key AND l.status NOT IN (1, 5)
                    ORDER BY l.created_at, l.id
                    LIMIT 8) AS first_rows
              WHERE first_rows.claim_expires_at > COALESCE(p_now, now()))))
    ORDER BY t.created_at, t.id
    LIMIT GREATEST(p_limit - (SELECT count(*) FROM retry), 0)
    FOR UPDATE OF t SKIP LOCKED
),
behind AS MATERIALIZED (
    SELECT t.id, t.partition_key, t.created_at, 1 AS grp, t.created_at AS at
    FROM {table} AS t
    WHERE p_pending
      AND p_behind
      AND p_from_created IS NOT NULL
      AND t.status = 0
      AND (t.partition_key IS NULL OR t.is_head)
      AND (t.created_at, t.id) < (p_from_created, p_from_id)
      AND (t.not_before IS NULL OR t.not_before <= COALESCE(p_now, now()))
      AND (t.claim_expires_at IS NULL OR t.claim_expires_at <= COALESCE(p_now, now()))
      AND (p_topic IS NULL OR t.topic = p_topic)
      AND (p_slices IS NULL
           OR COALESCE(t.slice_hash, {schema_prefix}"{name}_slice_hash"(t.partition_key, t.id))
              % p_slices = p_slice)
      AND (t.partition_key IS NULL OR (
          t.id = (SELECT f.id
                  FROM {table} AS f
                  WHERE f.partition_key = t.partition_key AND f.status NOT IN (1, 5)
                  ORDER BY f.created_at, f.id
                  LIMIT 1)
          AND NOT EXISTS (
              SELECT 1
              FROM (SELECT l.claim_expires_at
                    FROM {table} AS l
                    WHERE l.partition_key = t.partition_key AND l.status NOT IN (1, 5)
                    ORDER BY l.created_at, l.id
                    LIMIT 8) AS first_rows
              WHERE first_rows.claim_expires_at > COALESCE(p_now, now()))))
    ORDER BY t.created_at, t.id
    LIMIT GREATEST(p_limit - (SELECT count(*) FROM retry) - (SELECT count(*) FROM ahead), 0)
    FOR UPDATE OF t SKIP LOCKED
),
heads AS (
    SELECT * FROM retry
    UNION ALL
    SELECT * FROM ahead
    UNION ALL
    SELECT * FROM behind
),
-- Each head followed by its run: the head's next p_run - 1 rows in key order (one range
-- of the key order index), kept while every row up to it may be taken (pending, due, of
-- the claim's topic). Heads come in claim order and each run in key order, and the batch
-- is the first p_limit rows of this walk: it stops pulling heads, and locking them, once
-- it holds the batch.
candidates AS MATERIALIZED (
    SELECT r.id, r.step
    FROM heads AS h
    CROSS JOIN LATERAL (
        SELECT h.id, 0::bigint AS step
        UNION ALL
        SELECT n.id, n.step
        FROM (SELECT b.id,
                     row_number() OVER w AS step,
                     bool_and(b.status = 0
                              AND (b.not_before IS NULL OR b.not_before <= COALESCE(p_now, now()))
                              AND (p_topic IS NULL OR b.topic = p_topic)) OVER w AS takeable
              FROM (SELECT f.id, f.status, f.not_before, f.topic, f.created_at
                    FROM {table} AS f
                    WHERE p_run > 1
                      AND h.partition_key IS NOT NULL
                      AND f.partition_key = h.partition_key
                      AND f.status NOT IN (1, 5)
                      AND (f.created_at, f.id) > (h.created_at, h.id)
                    ORDER BY f.created_at, f.id
                    LIMIT GREATEST(p_run - 1, 0)) AS b
              WINDOW w AS (ORDER BY b.created_at, b.id)) AS n
        WHERE n.takeable
    ) AS r
    LIMIT GREATEST(p_limit, 0)
)
UPDATE {table} AS t
SET claim_owner = p_owner,
    claim_token = gen_random_uuid(),
    claimed_at = COALESCE(p_now, now()),
    claim_expires_at = COALESCE(p_now, now()) + p_lease_us * interval '1 microsecond',
    claim_attempt_count = LEAST(t.claim_attempt_count, 2147483646) + 1,
    stamp = gen_random_uuid()
FROM candidates AS c
WHERE t.id = c.id
  AND (c.step > 0 OR t.partition_key IS NULL OR t.is_head)
  AND (t.claim_expires_at IS NULL OR t.claim_expires_at <= COALESCE(p_now, now()))
  AND CASE WHEN t.status = 0
           THEN t.not_before IS NULL OR t.not_before <= COALESCE(p_now, now())
           WHEN t.status IN (2, 4)
           THEN c.step = 0 AND (t.next_retry_at IS NULL
                                OR t.next_retry_at <= COALESCE(p_now, now()))
           ELSE false
      END
RETURNING t.*;
END
$claim$;

CREATE OR REPLACE FUNCTION {schema_prefix}"{name}_claim_runs"(
    p_now timestamptz, p_topic text, p_limit bigint, p_owner text, p_lease_us bigint,
    p_retry boolean, p_pending boolean, p_slices bigint, p_slice bigint, p_run bigint)
RETURNS SETOF {table}
LANGUAGE plpgsql
VOLATILE
SET enable_sort = off
SET enable_bitmapscan = off
SET enable_seqscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
SET jit = off
SET plan_cache_mode = force_generic_plan
AS $claim$
BEGIN
RETURN QUERY
SELECT *
FROM {schema_prefix}"{name}_claim_runs"(p_now, p_topic, p_limit, p_owner, p_lease_us,
                                        p_retry, p_pending, NULL, NULL, false,
                                        p_slices, p_slice, p_run);
END
$claim$;
