-- How many delivered rows were delivered before the bound time: what a prune would delete.
SELECT count(*) AS n FROM {table} WHERE status = 1 AND delivered_at < ?
