-- Whether the table has the indexes an ordered claim walks (1) or not (0).
SELECT count(*) = 2 FROM {schema_prefix}sqlite_schema
WHERE type = 'index' AND name IN ('{name}_ordered_pending_idx', '{name}_ordered_retry_idx')
