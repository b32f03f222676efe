-- How many delivered rows were delivered before $1: what a prune with that cut-off deletes.
SELECT count(*) AS n FROM {table} WHERE status = 1 AND delivered_at < $1::timestamptz
