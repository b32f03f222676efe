-- One page of entries in one status, in creation order. Parameters: the status, the
-- topic or NULL (twice), the last id of the previous page or NULL (twice), the page size.
SELECT t.* FROM {table} AS t
WHERE t.status = ?
  AND (? IS NULL OR t.topic = ?)
  AND (? IS NULL OR (t.created_at, t.id) > (SELECT c.created_at, c.id FROM {table} AS c WHERE c.id = ?))
ORDER BY t.created_at, t.id
LIMIT ?
