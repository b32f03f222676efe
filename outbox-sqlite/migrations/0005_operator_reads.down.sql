-- Back to version 4: no row count, no index of parked rows.
DROP TRIGGER IF EXISTS {schema_prefix}{name}_count_delete;
DROP TRIGGER IF EXISTS {schema_prefix}{name}_count_insert;
DROP TABLE IF EXISTS {schema_prefix}{name}_row_count;
DROP INDEX IF EXISTS {schema_prefix}{name}_parked_idx;
