-- A key's rows not yet terminal, in key order: where the trigger and the ordered claim
-- find each key's first row. Built by `enable_ordered_claims` without blocking writers.
CREATE INDEX CONCURRENTLY IF NOT EXISTS {name}_key_order_idx
    ON {table} (partition_key, created_at, id)
    WHERE partition_key IS NOT NULL AND status NOT IN (1, 5)
