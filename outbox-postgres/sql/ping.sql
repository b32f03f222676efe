-- The listener's health check: one round trip on its dedicated connection.
SELECT 1
