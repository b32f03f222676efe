-- Whether the table was prepared for claims in per-key order (1) or not (0): the walk
-- indexes are created in the same transaction as the triggers that keep the heads.
SELECT count(*) = 2 FROM {schema_prefix}sqlite_schema
WHERE type = 'index' AND name IN ('{name}_ordered_pending_idx', '{name}_ordered_retry_idx')
