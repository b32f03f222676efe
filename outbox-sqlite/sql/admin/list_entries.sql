-- One page of entries in one live status ({status}), in creation order. The status and
-- the lowest status of its index ({status_floor}: `status >= 2` is the parked index's own
-- predicate, which is how SQLite matches a partial index; for pending, whose index
-- matches the status itself, it is 0) are written in, so the planner reads the index
-- that holds the status. ?1 topic or NULL, ?2 and ?3 the
-- place the page starts after (created_at and id, from list_cursor.sql), ?5 page size, ?6 partition key or NULL
-- (?4 is the delivered listing's). The place is spelt as a range on created_at and a
-- filter, not a row value, and bound rather than read by a subquery: in either of those
-- forms SQLite may sort every row of the status after the place when one status holds
-- all the parked rows.
SELECT * FROM {table} AS t
WHERE t.status = {status}
  AND t.status >= {status_floor}
  AND (?1 IS NULL OR t.topic = ?1)
  AND (?6 IS NULL OR t.partition_key = ?6)
  AND t.created_at >= ?2
  AND (t.created_at > ?2 OR t.id > ?3)
ORDER BY t.created_at, t.id
LIMIT ?5
