-- Proves the outbox table exists, with the newest column the store writes, without
-- reading a row.
SELECT id, slice_hash FROM {table} WHERE 1 = 0
