-- One page of entries in one status, in creation order. ?1 status, ?2 topic or NULL,
-- ?3 the last id of the previous page or NULL, ?4 page size.
SELECT * FROM {table} AS t
WHERE t.status = ?1
  AND (?2 IS NULL OR t.topic = ?2)
  AND (?3 IS NULL OR (t.created_at, t.id) > (SELECT c.created_at, c.id FROM {table} AS c WHERE c.id = ?3))
ORDER BY t.created_at, t.id
LIMIT ?4
