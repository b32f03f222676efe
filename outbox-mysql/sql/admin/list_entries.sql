-- One page of entries in one live status ({status}), in creation order, through the
-- range of the claim index that holds the status. The cursor's place is read first (a
-- one-row derived table, a constant to the planner), so the walk starts at the cursor,
-- not at the beginning of the range. Parameters: the last id of the previous page or NULL
-- (twice), the topic or NULL (twice), the partition key or NULL (twice), the page size.
-- An id that is not in the table gives an empty page.
SELECT t.*
FROM (SELECT COALESCE(MAX(c.created_at), CAST('1000-01-01' AS DATETIME(6))) AS created_at,
             COALESCE(MAX(c.id), x'') AS id,
             COUNT(*) AS found
      FROM {table} AS c WHERE c.id = ?) AS cursor_at
JOIN {table} AS t
WHERE t.status = {status}
  AND (? IS NULL OR cursor_at.found = 1)
  AND (? IS NULL OR t.topic = ?)
  AND (? IS NULL OR t.partition_key = ?)
  AND t.created_at >= cursor_at.created_at
  AND (t.created_at > cursor_at.created_at OR t.id > cursor_at.id)
ORDER BY t.created_at, t.id
LIMIT ?
