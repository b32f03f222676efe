-- The claim in per-key order: as claim.sql, but of the rows sharing a partition key only
-- the key's head (the oldest not delivered or dead-lettered, kept by the triggers of
-- migration 3) and the run behind it are taken, and only while no row of the key holds a
-- live lease. Keyless rows are taken as claim.sql takes them. Parameters as claim.sql's,
-- and ?10 the longest run (1: heads alone).
--
-- Each group walks the ordered partial index of heads and keyless rows, so the rows behind
-- a key's head are never visited: one key with a million entries costs the walk one entry,
-- and a hundred thousand keys with one entry each cost what as many keyless rows would.
-- The lease check is one seek per candidate in the index of leased keys. A key's head
-- that waits for its retry, or failed and waits for an operator, is not claimable, so the
-- rest of its key waits behind it.
WITH RECURSIVE retry AS MATERIALIZED (
    SELECT rowid AS rid, partition_key AS k, created_at AS c, id AS i,
           0 AS g, coalesce(next_retry_at, updated_at) AS o
    FROM {table} AS t
    WHERE ?6
      AND status IN (2, 4)
      AND (partition_key IS NULL OR is_head = 1)
      AND coalesce(next_retry_at, updated_at) <= ?2
      AND (next_retry_at IS NULL OR next_retry_at <= ?2)
      AND (claim_expires_at IS NULL OR claim_expires_at <= ?2)
      AND (?4 IS NULL OR topic = ?4)
      AND {slice_hash} % ?8 = ?9
      AND (partition_key IS NULL OR NOT EXISTS (
          SELECT 1 FROM {table} AS l
          WHERE l.partition_key = t.partition_key
            AND l.claim_expires_at IS NOT NULL
            AND l.claim_expires_at > ?2))
    ORDER BY coalesce(next_retry_at, updated_at), id
    LIMIT ?5
),
pending AS MATERIALIZED (
    SELECT rowid AS rid, partition_key AS k, created_at AS c, id AS i, 1 AS g, created_at AS o
    FROM {table} AS t
    WHERE ?7
      AND status = 0
      AND (partition_key IS NULL OR is_head = 1)
      AND (not_before IS NULL OR not_before <= ?2)
      AND (claim_expires_at IS NULL OR claim_expires_at <= ?2)
      AND (?4 IS NULL OR topic = ?4)
      AND {slice_hash} % ?8 = ?9
      AND (partition_key IS NULL OR NOT EXISTS (
          SELECT 1 FROM {table} AS l
          WHERE l.partition_key = t.partition_key
            AND l.claim_expires_at IS NOT NULL
            AND l.claim_expires_at > ?2))
    ORDER BY created_at, id
    LIMIT ?5 - (SELECT count(*) FROM retry)
),
-- Each head, then the rows right behind it in its key's order while each is pending, due
-- and of the claim's topic, up to ?10 rows a run: one seek in the key order index per row.
-- The queue is ordered by head, then step, so runs come whole in claim order, and the
-- batch (?5) ends the walk.
run (rid, k, c, i, g, o, hi, step) AS (
    SELECT rid, k, c, i, g, o, i, 0 FROM retry
    UNION ALL
    SELECT rid, k, c, i, g, o, i, 0 FROM pending
    UNION ALL
    SELECT n.rowid, r.k, n.created_at, n.id, r.g, r.o, r.hi, r.step + 1
    FROM run AS r
    JOIN {table} AS n ON n.rowid = (
        SELECT f.rowid FROM {table} AS f
        WHERE f.partition_key = r.k AND f.status NOT IN (1, 5)
          AND f.created_at >= r.c AND (f.created_at > r.c OR f.id > r.i)
        ORDER BY f.created_at, f.id
        LIMIT 1)
    WHERE r.k IS NOT NULL
      AND r.step + 1 < ?10
      AND n.status = 0
      AND (n.not_before IS NULL OR n.not_before <= ?2)
      AND (?4 IS NULL OR n.topic = ?4)
    ORDER BY 5, 6, 7, 8
    LIMIT ?5
)
UPDATE {table}
SET claim_owner = ?1,
    claim_token = randomblob(16),
    claimed_at = ?2,
    claim_expires_at = ?3,
    claim_attempt_count = min(claim_attempt_count, 4294967295) + 1,
    stamp = randomblob(16)
WHERE rowid IN (SELECT rid FROM run)
  AND (claim_expires_at IS NULL OR claim_expires_at <= ?2)
  AND (?4 IS NULL OR topic = ?4)
  AND CASE WHEN status = 0 THEN not_before IS NULL OR not_before <= ?2
           WHEN status IN (2, 4) THEN next_retry_at IS NULL OR next_retry_at <= ?2
           ELSE 0
      END
RETURNING *
