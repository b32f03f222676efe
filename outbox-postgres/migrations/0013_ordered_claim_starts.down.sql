-- Back to version 12: the claim in key runs has no start. The ten-parameter form is
-- restored as revision 3 of definitions/claim_runs.sql defined it (revision 4 made it call
-- the form this drops), then the form with the start is dropped.

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
pending AS MATERIALIZED (
    SELECT t.id, t.partition_key, t.created_at, 1 AS grp, t.created_at AS at
    FROM {table} AS t
    WHERE p_pending
      AND t.status = 0
      AND (t.partition_key IS NULL OR t.is_head)
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
heads AS (
    SELECT * FROM retry
    UNION ALL
    SELECT * FROM pending
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

DROP FUNCTION IF EXISTS {schema_prefix}"{name}_claim_runs"(
    timestamptz, text, bigint, text, bigint, boolean, boolean, timestamptz, uuid, boolean,
    bigint, bigint, bigint);
