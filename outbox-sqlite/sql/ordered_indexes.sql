-- What an ordered claim (claim_ordered.sql) walks: pending heads and keyless rows, and the
-- same of retries. Created by `enable_ordered_claims` for tables drained in key order;
-- they hold every keyless row too, so every enqueue writes one more index entry.
CREATE INDEX IF NOT EXISTS {schema_prefix}{name}_ordered_pending_idx ON {name} (created_at, id)
    WHERE status = 0 AND (partition_key IS NULL OR is_head = 1);
CREATE INDEX IF NOT EXISTS {schema_prefix}{name}_ordered_retry_idx
    ON {name} (coalesce(next_retry_at, updated_at), id)
    WHERE status IN (2, 4) AND (partition_key IS NULL OR is_head = 1);
