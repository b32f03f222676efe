-- The current heads, one per key with work: where the trigger finds the previous head.
-- Built by `enable_ordered_claims` without blocking writers.
CREATE INDEX CONCURRENTLY IF NOT EXISTS {name}_key_head_idx ON {table} (partition_key)
    WHERE is_head AND status NOT IN (1, 5)
