-- One page of delivered entries, from the most recent delivery back, through the index
-- retention walks (its entries end with the rowid, which orders entries delivered at the
-- same instant). ?1 topic or NULL, ?2 and ?4 the place the page starts before
-- (delivered_at and rowid, from list_delivered_cursor.sql), ?5 page size, ?6 partition key or NULL (?3 is the live
-- listings').
SELECT * FROM {table} AS t
WHERE t.status = 1
  AND (?1 IS NULL OR t.topic = ?1)
  AND (?6 IS NULL OR t.partition_key = ?6)
  AND t.delivered_at <= ?2
  AND (t.delivered_at < ?2 OR t.rowid < ?4)
ORDER BY t.delivered_at DESC, t.rowid DESC
LIMIT ?5
