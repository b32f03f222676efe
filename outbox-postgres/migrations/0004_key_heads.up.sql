-- Per-key order (claims with `ordered`): each keyed row knows whether it is its key's
-- head, the oldest row of the key (by created_at, then id) not yet delivered or
-- dead-lettered. The ordered claim (a function of its own, so drains of the previous
-- release keep calling the unchanged `_claim` during a deploy) walks partial indexes that
-- hold only heads and keyless rows: a key's backlog behind its head is never visited.
-- Those two indexes hold every keyless row as well, which costs every enqueue one more
-- index entry (measured: bulk enqueue 0.7x), so they are created by
-- `enable_ordered_claims` (`outbox migrate --ordered`) for the tables drained in key
-- order, not here; what this migration adds costs keyed rows only.
--
-- A trigger keeps the flag, so every writer (the store, the host's writer, COPY, the
-- portable store, an operator's UPDATE) keeps it right without knowing of it. It runs on
-- an insert, on a status change between terminal and not (a delivery, a dead letter, a
-- requeue) and on the delete of a head, and recomputes that one key's head with one seek
-- in the key index. It takes a share lock on the key's current first row while it does:
-- a delivery or requeue of that row waits for the writer's commit and then sees its row,
-- and a writer waits for a delivery of it in flight, so a head can move only past rows
-- the trigger saw. (Not an advisory lock per key: a transaction writing 100,000 keys
-- would hold 100,000 of them and run out of shared memory; a row lock lives in the row.)
-- Two transactions writing the first rows of an empty key cannot see each other and may
-- both flag theirs; the claim therefore takes a flagged row only if it is its key's first
-- row not yet terminal, one more seek in the key index.
--
-- No index covers claim_expires_at: claims and renewals change it, and an indexed column
-- would make every claim a non-HOT update. The claim's check that no row of a key is under
-- a live lease therefore looks at the key's first eight rows not yet terminal (the head,
-- and rows an operator requeued ahead of it), one bounded walk of the key index.
ALTER TABLE {table} ADD COLUMN is_head boolean NOT NULL DEFAULT false;

CREATE INDEX {name}_key_order_idx ON {table} (partition_key, created_at, id)
    WHERE partition_key IS NOT NULL AND status NOT IN (1, 5);
CREATE INDEX {name}_key_head_idx ON {table} (partition_key)
    WHERE is_head AND status NOT IN (1, 5);

UPDATE {table} AS t
SET is_head = true
FROM (SELECT DISTINCT ON (partition_key) id
      FROM {table}
      WHERE partition_key IS NOT NULL AND status NOT IN (1, 5)
      ORDER BY partition_key, created_at, id) AS h
WHERE t.id = h.id;

-- Recomputes the head of the key of the row the trigger fired for. A terminal row keeps
-- whatever flag it had: no index that matters holds it, and clearing it would write one
-- more row version for every delivery.
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

CREATE TRIGGER {name}_heads_after_insert AFTER INSERT ON {table}
    FOR EACH ROW WHEN (NEW.partition_key IS NOT NULL AND NEW.status NOT IN (1, 5))
    EXECUTE FUNCTION {schema_prefix}"{name}_keep_heads"();
CREATE TRIGGER {name}_heads_after_status AFTER UPDATE OF status ON {table}
    FOR EACH ROW WHEN (NEW.partition_key IS NOT NULL
                       AND (OLD.status IN (1, 5)) IS DISTINCT FROM (NEW.status IN (1, 5)))
    EXECUTE FUNCTION {schema_prefix}"{name}_keep_heads"();
CREATE TRIGGER {name}_heads_after_delete AFTER DELETE ON {table}
    FOR EACH ROW WHEN (OLD.partition_key IS NOT NULL AND OLD.is_head
                       AND OLD.status NOT IN (1, 5))
    EXECUTE FUNCTION {schema_prefix}"{name}_keep_heads"();

-- The claim in per-key order: as `_claim`, but of the rows sharing a partition key only
-- the head is taken (a flagged row that is its key's first row not yet terminal), and only
-- while none of the key's first rows not yet terminal holds a live lease. Keyless rows are taken as `_claim` takes them. Same parameters, same
-- settings (an ordered walk of each partial index whatever the statistics, no JIT).
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
