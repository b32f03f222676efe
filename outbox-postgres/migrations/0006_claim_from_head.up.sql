-- Claims that start their pending walk at a key the caller learned, so that their cost
-- stays bounded by the batch while dead row versions cannot be removed.
--
-- Every delivered row leaves its entry in the pending index: the delivery writes a new
-- row version (status 1) and the entry still points at the old one. Vacuum removes such
-- entries, and a scan marks them dead as it passes them, but only once no transaction can
-- still see the old version. While any session holds an older snapshot (a forgotten
-- BEGIN, a long report, a replication slot or a standby with hot_standby_feedback), every
-- entry of every row delivered since stays, at the low end of the index, and a walk from
-- the start steps over all of them, visiting each one's heap row: with D such entries a
-- claim costs D + batch, and the drain slows as D grows.
--
-- These claims take the pending walk's start (p_from_created, p_from_id): the walk ahead
-- begins at that key and skips everything before it, so a claim costs the entries between
-- the key and its batch. When the walk ahead comes up short (the queue is not
-- backlogged) and p_behind allows it, the claim walks the part before the key too, for
-- what is left of the batch: a row that became claimable behind the key (committed late
-- with an earlier creation time, requeued by an operator, its lease expired or released,
-- its not_before come due) is taken then. The store passes the oldest pending key its
-- previous claim took, allows the walk behind unless such walks have been costly lately
-- (many dead entries: then it spaces them out), and walks from the beginning (a NULL
-- start, as the claims of migrations 0002 and 0005 walk) on an interval while batches
-- come back full. The retry walk is unchanged: it runs over rows that failed, which are
-- few.
--
-- The seven- and nine-argument claims stay for drains of the previous release during a
-- deploy. Two functions, not one: the slice condition alone costs a walk of every slice
-- about 15% (measured in a server-side loop of claims), so the claim of every slice is
-- written without it. The claim attempt count stops below the column's maximum.
CREATE FUNCTION {schema_prefix}"{name}_claim"(
    p_now timestamptz, p_topic text, p_limit bigint, p_owner text, p_lease_us bigint,
    p_retry boolean, p_pending boolean, p_from_created timestamptz, p_from_id uuid,
    p_behind boolean)
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
    ORDER BY COALESCE(t.next_retry_at, t.updated_at), t.id
    LIMIT p_limit
    FOR UPDATE SKIP LOCKED
),
ahead AS MATERIALIZED (
    SELECT t.id, t.status
    FROM {table} AS t
    WHERE p_pending
      AND t.status = 0
      AND (t.created_at, t.id) >= (COALESCE(p_from_created, '-infinity'),
                                   COALESCE(p_from_id, '00000000-0000-0000-0000-000000000000'))
      AND (t.not_before IS NULL OR t.not_before <= COALESCE(p_now, now()))
      AND (t.claim_expires_at IS NULL OR t.claim_expires_at <= COALESCE(p_now, now()))
      AND (p_topic IS NULL OR t.topic = p_topic)
    ORDER BY t.created_at, t.id
    LIMIT p_limit - (SELECT count(*) FROM retry)
    FOR UPDATE SKIP LOCKED
),
behind AS MATERIALIZED (
    SELECT t.id, t.status
    FROM {table} AS t
    WHERE p_pending
      AND p_behind
      AND p_from_created IS NOT NULL
      AND t.status = 0
      AND (t.created_at, t.id) < (p_from_created, p_from_id)
      AND (t.not_before IS NULL OR t.not_before <= COALESCE(p_now, now()))
      AND (t.claim_expires_at IS NULL OR t.claim_expires_at <= COALESCE(p_now, now()))
      AND (p_topic IS NULL OR t.topic = p_topic)
    ORDER BY t.created_at, t.id
    LIMIT p_limit - (SELECT count(*) FROM retry) - (SELECT count(*) FROM ahead)
    FOR UPDATE SKIP LOCKED
),
candidates AS (
    SELECT id, status FROM retry
    UNION ALL
    SELECT id, status FROM ahead
    UNION ALL
    SELECT id, status FROM behind
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

-- The same claim of one slice: p_slices (N) and p_slice (i) as in migration 0005.
CREATE FUNCTION {schema_prefix}"{name}_claim"(
    p_now timestamptz, p_topic text, p_limit bigint, p_owner text, p_lease_us bigint,
    p_retry boolean, p_pending boolean, p_from_created timestamptz, p_from_id uuid,
    p_behind boolean, p_slices bigint, p_slice bigint)
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
      AND COALESCE(t.slice_hash, {schema_prefix}"{name}_slice_hash"(t.partition_key, t.id))
          % p_slices = p_slice
    ORDER BY COALESCE(t.next_retry_at, t.updated_at), t.id
    LIMIT p_limit
    FOR UPDATE SKIP LOCKED
),
ahead AS MATERIALIZED (
    SELECT t.id, t.status
    FROM {table} AS t
    WHERE p_pending
      AND t.status = 0
      AND (t.created_at, t.id) >= (COALESCE(p_from_created, '-infinity'),
                                   COALESCE(p_from_id, '00000000-0000-0000-0000-000000000000'))
      AND (t.not_before IS NULL OR t.not_before <= COALESCE(p_now, now()))
      AND (t.claim_expires_at IS NULL OR t.claim_expires_at <= COALESCE(p_now, now()))
      AND (p_topic IS NULL OR t.topic = p_topic)
      AND COALESCE(t.slice_hash, {schema_prefix}"{name}_slice_hash"(t.partition_key, t.id))
          % p_slices = p_slice
    ORDER BY t.created_at, t.id
    LIMIT p_limit - (SELECT count(*) FROM retry)
    FOR UPDATE SKIP LOCKED
),
behind AS MATERIALIZED (
    SELECT t.id, t.status
    FROM {table} AS t
    WHERE p_pending
      AND p_behind
      AND p_from_created IS NOT NULL
      AND t.status = 0
      AND (t.created_at, t.id) < (p_from_created, p_from_id)
      AND (t.not_before IS NULL OR t.not_before <= COALESCE(p_now, now()))
      AND (t.claim_expires_at IS NULL OR t.claim_expires_at <= COALESCE(p_now, now()))
      AND (p_topic IS NULL OR t.topic = p_topic)
      AND COALESCE(t.slice_hash, {schema_prefix}"{name}_slice_hash"(t.partition_key, t.id))
          % p_slices = p_slice
    ORDER BY t.created_at, t.id
    LIMIT p_limit - (SELECT count(*) FROM retry) - (SELECT count(*) FROM ahead)
    FOR UPDATE SKIP LOCKED
),
candidates AS (
    SELECT id, status FROM retry
    UNION ALL
    SELECT id, status FROM ahead
    UNION ALL
    SELECT id, status FROM behind
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

-- What dead row versions cost a claim now, for `stats`: the entries a walk from the
-- beginning of the pending index steps over before the first pending row, read from the
-- server's counter of entries the index returned to this session, before and after one
-- such walk. Entries of rows dead to every transaction are marked as the walk passes them
-- and skipped from then on, so what it counts is what a held snapshot keeps.
CREATE FUNCTION {schema_prefix}"{name}_dead_index_entries"()
RETURNS bigint
LANGUAGE plpgsql
VOLATILE
SET enable_sort = off
SET enable_bitmapscan = off
SET enable_seqscan = off
SET jit = off
AS $entries$
DECLARE
    pending_idx CONSTANT regclass := '{schema_prefix}{name}_pending_idx';
    before bigint := pg_stat_get_xact_tuples_returned(pending_idx);
    found integer;
BEGIN
    SELECT count(*) INTO found
    FROM (SELECT 1 FROM {table} AS t WHERE t.status = 0 ORDER BY t.created_at, t.id LIMIT 1)
        AS first_pending;
    RETURN greatest(pg_stat_get_xact_tuples_returned(pending_idx) - before - found, 0);
END
$entries$;
