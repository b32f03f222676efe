-- Proves the outbox table exists without reading a row.
SELECT id FROM {table} WHERE 1 = 0
