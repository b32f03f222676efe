-- How many delivered rows were delivered before ?: what a prune would delete.
SELECT COUNT(*) FROM {table} WHERE status = 1 AND delivered_at < ?
