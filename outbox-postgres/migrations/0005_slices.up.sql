-- Disjoint slices (claims with `slice`): slice i of N takes the rows whose slice hash
-- (outbox_core::slice_hash: 32-bit FNV-1a of the partition key's UTF-8 bytes, or of the
-- id's 16 bytes without a key) is i modulo N. This crate's writers store the hash with
-- each row; rows written before this migration, or by the host's own SQL, have NULL here
-- and the claim computes theirs, so adding the column rewrites nothing.
ALTER TABLE {table} ADD COLUMN slice_hash bigint
    CHECK (slice_hash BETWEEN 0 AND 4294967295);

-- The slice hash of a key, or of an id when the key is NULL; XOR is `#`.
CREATE FUNCTION {schema_prefix}"{name}_slice_hash"(p_key text, p_id uuid)
RETURNS bigint
LANGUAGE plpgsql
IMMUTABLE
PARALLEL SAFE
AS $hash$
DECLARE
    bytes bytea := COALESCE(convert_to(p_key, 'UTF8'), uuid_send(p_id));
    h bigint := 2166136261;
BEGIN
    FOR i IN 0 .. length(bytes) - 1 LOOP
        h := ((h # get_byte(bytes, i)) * 16777619) & 4294967295;
    END LOOP;
    RETURN h;
END
$hash$;

-- The claims take the slice as two more parameters, p_slices (N; NULL: every slice) and
-- p_slice (i). They are new functions beside the seven-parameter ones, which drains of the
-- previous release keep calling during a deploy; a later migration drops those. A slice
-- walk passes over the rows of the other slices, so one claim visits about N times its
-- batch: slices suit a handful of drains, not thousands. The claim attempt count stops
-- below the column's maximum, as in the ordered claim.
CREATE FUNCTION {schema_prefix}"{name}_claim"(
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
      AND COALESCE(t.next_retry_at, t.updated_at) <= COALESCE(p_now, now())
      AND (t.next_retry_at IS NULL OR t.next_retry_at <= COALESCE(p_now, now()))
      AND (t.claim_expires_at IS NULL OR t.claim_expires_at <= COALESCE(p_now, now()))
      AND (p_topic IS NULL OR t.topic = p_topic)
      AND (p_slices IS NULL
           OR COALESCE(t.slice_hash, {schema_prefix}"{name}_slice_hash"(t.partition_key, t.id))
              % p_slices = p_slice)
    ORDER BY COALESCE(t.next_retry_at, t.updated_at), t.id
    LIMIT p_limit
    FOR UPDATE SKIP LOCKED
),
pending AS MATERIALIZED (
    SELECT t.id, t.status
    FROM {table} AS t
    WHERE p_pending
      AND t.status = 0
      AND (t.not_before IS NULL OR t.not_before <= COALESCE(p_now, now()))
      AND (t.claim_expires_at IS NULL OR t.claim_expires_at <= COALESCE(p_now, now()))
      AND (p_topic IS NULL OR t.topic = p_topic)
      AND (p_slices IS NULL
           OR COALESCE(t.slice_hash, {schema_prefix}"{name}_slice_hash"(t.partition_key, t.id))
              % p_slices = p_slice)
    ORDER BY t.created_at, t.id
    LIMIT p_limit - (SELECT count(*) FROM retry)
    FOR UPDATE SKIP LOCKED
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
  AND (t.claim_expires_at IS NULL OR t.claim_expires_at <= COALESCE(p_now, now()))
  AND CASE WHEN t.status = 0
           THEN t.not_before IS NULL OR t.not_before <= COALESCE(p_now, now())
           ELSE t.next_retry_at IS NULL OR t.next_retry_at <= COALESCE(p_now, now())
      END
RETURNING t.*
$claim$;

-- The claim in per-key order (migration 0004's), with the slice parameters.
CREATE FUNCTION {schema_prefix}"{name}_claim_ordered"(
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
