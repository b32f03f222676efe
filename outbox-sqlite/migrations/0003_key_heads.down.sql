-- Back to version 2: no head flag, its triggers or its indexes.
DROP TRIGGER IF EXISTS {schema_prefix}{name}_head_after_insert;
DROP TRIGGER IF EXISTS {schema_prefix}{name}_head_after_status;
DROP TRIGGER IF EXISTS {schema_prefix}{name}_head_after_delete;
DROP INDEX IF EXISTS {schema_prefix}{name}_key_order_idx;
DROP INDEX IF EXISTS {schema_prefix}{name}_key_head_idx;
DROP INDEX IF EXISTS {schema_prefix}{name}_key_lease_idx;
DROP INDEX IF EXISTS {schema_prefix}{name}_ordered_pending_idx;
DROP INDEX IF EXISTS {schema_prefix}{name}_ordered_retry_idx;
ALTER TABLE {table} DROP COLUMN is_head;
