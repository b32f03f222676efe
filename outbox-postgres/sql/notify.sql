-- One wake-up for a whole bulk enqueue, raised once its rows are committed.
SELECT pg_notify($1::text, '')
