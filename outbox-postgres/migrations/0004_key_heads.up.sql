-- Per-key order (claims with `ordered`): each keyed row of a table prepared for it
-- (`enable_ordered_claims`, `outbox migrate --ordered`, sql/ordered/) knows whether it is
-- its key's head, the oldest row of the key (by created_at, then id) not yet delivered or
-- dead-lettered. This migration installs only the code: the flag's column, the trigger
-- function that keeps it, and the ordered claim (a function of its own, so drains of the
-- previous release keep calling the unchanged `_claim` during a deploy). The indexes, the
-- triggers and the flags of the rows already there come with the preparation, for tables
-- drained in key order: the walk indexes hold every keyless row (bulk enqueue measured at
-- 0.7x with them), and the triggers cost every keyed row's writes, and make unordered
-- drains of one key's rows wait on each other (measured: 0.3x at 1,000 keys).
ALTER TABLE {table} ADD COLUMN is_head boolean NOT NULL DEFAULT false;

-- Recomputes the head of the key of the row the trigger fired for, with one seek in the
-- key index. It takes a share lock on the key's current first row not yet terminal while
-- it does: a delivery or requeue of that row waits for the writer's commit and then sees
-- its row, and a writer waits for a delivery of it in flight, so a head can move only
-- past rows the trigger saw. (Not an advisory lock per key: a transaction writing 100,000
-- keys would hold 100,000 of them and run out of shared memory; a row lock lives in the
-- row.) Two transactions writing the first rows of an empty key cannot see each other and
-- may both flag theirs; the ordered claim therefore takes a flagged row only if it is its
-- key's first row not yet terminal. A terminal row keeps whatever flag it had: no index
-- that matters holds it, and clearing it would write one more version of every delivery.
CREATE FUNCTION {schema_prefix}"{name}_keep_heads"()
RETURNS trigger
LANGUAGE plpgsql
SET enable_seqscan = off
SET enable_bitmapscan = off
SET jit = off
AS $heads$
DECLARE
    k text;
    head uuid;
BEGIN
    IF TG_OP = 'DELETE' THEN
        k := OLD.partition_key;
    ELSE
        k := NEW.partition_key;
    END IF;
    SELECT h.id INTO head
    FROM {table} AS h
    WHERE h.partition_key = k AND h.status NOT IN (1, 5)
    ORDER BY h.created_at, h.id
    LIMIT 1
    FOR SHARE;
    UPDATE {table} AS t SET is_head = false
    WHERE t.partition_key = k AND t.is_head AND t.status NOT IN (1, 5)
      AND t.id IS DISTINCT FROM head;
    UPDATE {table} AS t SET is_head = true
    WHERE t.id = head AND NOT t.is_head;
    RETURN NULL;
END
$heads$;

-- The claim in per-key order: as `_claim`, but of the rows sharing a partition key only
-- the head is taken (a flagged row that is its key's first row not yet terminal), and only
-- while none of the key's first rows not yet terminal holds a live lease; keyless rows
-- are taken as `_claim` takes them. Same parameters, same settings (an ordered walk of
-- each partial index whatever the statistics, no JIT). No index covers claim_expires_at:
-- claims and renewals change it, and an indexed column would make every claim a non-HOT
-- update, so the lease check looks at the key's first eight rows not yet terminal (the
-- head, and rows an operator requeued ahead of it), one bounded walk of the key index.
CREATE FUNCTION {schema_prefix}"{name}_claim_ordered"(
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
