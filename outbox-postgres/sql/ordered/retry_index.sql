-- What an ordered claim walks for retry-ready rows: heads and keyless rows, in retry
-- order. Created by `enable_ordered_claims` without blocking writers.
CREATE INDEX CONCURRENTLY IF NOT EXISTS {name}_ordered_retry_idx
    ON {table} ((COALESCE(next_retry_at, updated_at)), id)
    WHERE status IN (2, 4) AND (partition_key IS NULL OR is_head)
