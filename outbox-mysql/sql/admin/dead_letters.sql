-- Dead-lettered rows, most recently dead-lettered first. ? limit.
SELECT * FROM {table} WHERE status = 5 ORDER BY updated_at DESC, id DESC LIMIT ?
