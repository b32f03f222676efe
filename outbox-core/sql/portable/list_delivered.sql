-- One page of delivered entries, from the most recent delivery back. Binds as
-- list_entries.sql: NULL (the clock column), the status (delivered), a topic twice and a
-- partition key twice (or NULL twice each), the cursor id twice (or NULL twice), the page
-- size. A cursor that is not a delivered entry gives an empty page.
SELECT COALESCE(?, {now}) AS clock_now, {columns}
FROM {table} AS t
WHERE t.status = ?
  AND (? IS NULL OR t.topic = ?)
  AND (? IS NULL OR t.partition_key = ?)
  AND (? IS NULL OR (t.delivered_at, t.id) < (SELECT c.delivered_at, c.id FROM {table} AS c WHERE c.id = ? AND c.status = 1))
ORDER BY t.delivered_at DESC, t.id DESC
LIMIT ?
