-- What an ordered claim walks for pending rows: heads and keyless rows. Created by
-- `enable_ordered_claims` without blocking writers; it holds every keyless pending row
-- too, so every enqueue writes one more index entry.
CREATE INDEX CONCURRENTLY IF NOT EXISTS {name}_ordered_pending_idx ON {table} (created_at, id)
    WHERE status = 0 AND (partition_key IS NULL OR is_head)
