-- The heads of the keys a completion finished rows of, moved in one statement, in the
-- completion's write transaction, right after it (complete_batch.sql, on a table prepared
-- for per-key order). ?1 is a JSON array of those partition keys. Each key's first row
-- not yet terminal (by created_at, then id: one seek in the key order index) is flagged
-- if it is not already; a key with no such row is left alone.
--
-- Flagging is all there is to do: a completion only takes rows out of a key's unfinished
-- rows, so the first of those can only move later, onto a row with no flag, and no other
-- row gains a flag it should not have. The completion cleared the flags of the rows it
-- finished, which keeps the status trigger from doing the same work row by row.
UPDATE {table}
SET is_head = 1
WHERE is_head = 0
  AND rowid IN (
      SELECT (SELECT h.rowid FROM {table} AS h
              WHERE h.partition_key = k.value AND h.status NOT IN (1, 5)
              ORDER BY h.created_at, h.id LIMIT 1)
      FROM json_each(?1) AS k)
