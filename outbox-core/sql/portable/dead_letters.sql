-- Dead-lettered rows (status 5), most recently dead-lettered first.
SELECT COALESCE(?, {now}) AS clock_now, {columns}
FROM {table}
WHERE status = 5
ORDER BY updated_at DESC, id DESC
LIMIT ?
