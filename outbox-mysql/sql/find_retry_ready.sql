-- The retry-ready rows, in retry order, without claiming them. Parameters as in
-- find_pending.sql.
SELECT t.*
FROM (SELECT CAST(COALESCE(?, UTC_TIMESTAMP(6)) AS DATETIME(6)) AS clock_now,
             CAST(? AS CHAR(255)) AS topic) AS p
JOIN {table} AS t FORCE INDEX ({name}_retry)
WHERE t.retry_at <= p.clock_now
  AND t.status IN (2, 4)
  AND (t.next_retry_at IS NULL OR t.next_retry_at <= p.clock_now)
  AND (p.topic IS NULL OR t.topic = p.topic)
{slice_filter}
ORDER BY t.retry_at, t.id
LIMIT ?
