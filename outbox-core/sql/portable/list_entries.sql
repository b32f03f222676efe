-- One page of entries in one status, in creation order. Binds: NULL (the clock column),
-- the status, a topic twice (or NULL twice for every topic), a partition key twice (or
-- NULL twice for any), the cursor id twice (the last id of the previous page,
-- or NULL twice for the first page), the page size.
SELECT COALESCE(?, {now}) AS clock_now, {columns}
FROM {table} AS t
WHERE t.status = ?
  AND (? IS NULL OR t.topic = ?)
  AND (? IS NULL OR t.partition_key = ?)
  AND (? IS NULL OR (t.created_at, t.id) > (SELECT c.created_at, c.id FROM {table} AS c WHERE c.id = ?))
ORDER BY t.created_at, t.id
LIMIT ?
