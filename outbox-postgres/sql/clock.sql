-- The database clock, for the entries of a bulk enqueue.
SELECT now()
