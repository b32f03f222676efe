-- How many delivered rows were delivered before ?1 (µs): what a prune would delete.
SELECT count(*) FROM {table} WHERE status = 1 AND delivered_at < ?1
