-- The oldest pending row (status 0), with the clock column the entry readers expect.
SELECT COALESCE(?, {now}) AS clock_now, {columns}
FROM {table}
WHERE status = 0
ORDER BY created_at, id
LIMIT 1
