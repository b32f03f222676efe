-- Back to version 8: no live counts, no index of parked rows.
DROP FUNCTION IF EXISTS {schema_prefix}"{name}_live_counts"(timestamptz);
DROP INDEX IF EXISTS {schema_prefix}{name}_parked_idx;
