-- The oldest pending rows eligible now, without claiming them, whether or not someone
-- holds a lease on them. Parameters: now or NULL (the server's clock), topic or NULL,
-- the slice count and index (where the form names them), the limit.
SELECT t.*
FROM (SELECT CAST(COALESCE(?, UTC_TIMESTAMP(6)) AS DATETIME(6)) AS clock_now,
             CAST(? AS CHAR(255)) AS topic) AS p
JOIN {table} AS t FORCE INDEX ({name}_pending)
WHERE t.status = 0
  AND (t.not_before IS NULL OR t.not_before <= p.clock_now)
  AND (p.topic IS NULL OR t.topic = p.topic)
{slice_filter}
ORDER BY t.created_at, t.id
LIMIT ?
