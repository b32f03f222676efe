-- How many delivered rows were delivered before @P1: what a prune with that cut-off deletes.
SELECT COUNT_BIG(*) AS n FROM {table} WHERE status = 1 AND delivered_at < @P1;
