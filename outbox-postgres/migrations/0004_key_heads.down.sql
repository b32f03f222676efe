-- Back to version 3: no ordered claim, head flag, trigger or their indexes.
DROP FUNCTION IF EXISTS {schema_prefix}"{name}_claim_ordered"(
    timestamptz, text, bigint, text, bigint, boolean, boolean);
DROP TRIGGER IF EXISTS {name}_heads_after_insert ON {table};
DROP TRIGGER IF EXISTS {name}_heads_after_status ON {table};
DROP TRIGGER IF EXISTS {name}_heads_after_delete ON {table};
DROP FUNCTION IF EXISTS {schema_prefix}"{name}_keep_heads"();
DROP INDEX IF EXISTS {schema_prefix}{name}_key_order_idx;
DROP INDEX IF EXISTS {schema_prefix}{name}_key_head_idx;
DROP INDEX IF EXISTS {schema_prefix}{name}_ordered_pending_idx;
DROP INDEX IF EXISTS {schema_prefix}{name}_ordered_retry_idx;
ALTER TABLE {table} DROP COLUMN IF EXISTS is_head;
