-- The claims in per-key order sql/claim_ordered.sql calls: of each key only its head
-- (is_head, kept by keep_heads), while none of the key's first rows holds a live lease;
-- keyless rows as the plain claim takes them. The nine-parameter form is the claim of one
-- slice. Plans pinned as the plain claim's.

CREATE OR REPLACE FUNCTION {schema_prefix}"{name}_claim_ordered"(
    p_now timestamptz, p_topic text, p_limit bigint, p_owner text, p_lease_us bigint,
    p_retry boolean, p_pending boolean)
RETURNS SETOF {table}
LANGUAGE sql
VOLATILE
SET enable_sort = off
SET enable_bitmapscan = off
SET enable_seqscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
SET jit = off
AS $claim$
WITH retry AS MATERIALIZED (
    SELECT t.id, t.status
    FROM {table} AS t
    WHERE p_retry
      AND t.status IN (2, 4)
      AND (t.partition_key IS NULL OR t.is_head)
      AND COALESCE(t.next_retry_at, t.updated_at) <= COALESCE(p_now, now())
      AND (t.next_retry_at IS NULL OR t.next_retry_at <= COALESCE(p_now, now()))
      AND (t.claim_expires_at IS NULL OR t.claim_expires_at <= COALESCE(p_now, now()))
      AND (p_topic IS NULL OR t.topic = p_topic)
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
    LIMIT p_limit
    FOR UPDATE OF t SKIP LOCKED
),
pending AS MATERIALIZED (
    SELECT t.id, t.status
    FROM {table} AS t
    WHERE p_pending
      AND t.status = 0
      AND (t.partition_key IS NULL OR t.is_head)
      AND (t.not_before IS NULL OR t.not_before <= COALESCE(p_now, now()))
      AND (t.claim_expires_at IS NULL OR t.claim_expires_at <= COALESCE(p_now, now()))
      AND (p_topic IS NULL OR t.topic = p_topic)
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
    LIMIT p_limit - (SELECT count(*) FROM retry)
    FOR UPDATE OF t SKIP LOCKED
),
candidates AS (
    SELECT id, status FROM retry
    UNION ALL
    SELECT id, status FROM pending
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
  AND t.status = c.status
  AND (t.partition_key IS NULL OR t.is_head)
  AND (t.claim_expires_at IS NULL OR t.claim_expires_at <= COALESCE(p_now, now()))
  AND CASE WHEN t.status = 0
           THEN t.not_before IS NULL OR t.not_before <= COALESCE(p_now, now())
           ELSE t.next_retry_at IS NULL OR t.next_retry_at <= COALESCE(p_now, now())
      END
RETURNING t.*
$claim$;

CREATE OR REPLACE FUNCTION {schema_prefix}"{name}_claim_ordered"(
    p_now timestamptz, p_topic text, p_limit bigint, p_owner text, p_lease_us bigint,
    p_retry boolean, p_pending boolean, p_slices bigint, p_slice bigint)
RETURNS SETOF {table}
LANGUAGE sql
VOLATILE
SET enable_sort = off
SET enable_bitmapscan = off
SET enable_seqscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
SET jit = off
AS $claim$
WITH retry AS MATERIALIZED (
    SELECT t.id, t.status
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
    LIMIT p_limit
    FOR UPDATE OF t SKIP LOCKED
),
pending AS MATERIALIZED (
    SELECT t.id, t.status
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
    LIMIT p_limit - (SELECT count(*) FROM retry)
    FOR UPDATE OF t SKIP LOCKED
),
candidates AS (
    SELECT id, status FROM retry
    UNION ALL
    SELECT id, status FROM pending
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
  AND t.status = c.status
  AND (t.partition_key IS NULL OR t.is_head)
  AND (t.claim_expires_at IS NULL OR t.claim_expires_at <= COALESCE(p_now, now()))
  AND CASE WHEN t.status = 0
           THEN t.not_before IS NULL OR t.not_before <= COALESCE(p_now, now())
           ELSE t.next_retry_at IS NULL OR t.next_retry_at <= COALESCE(p_now, now())
      END
RETURNING t.*
$claim$;
