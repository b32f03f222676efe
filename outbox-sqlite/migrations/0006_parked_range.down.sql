-- Back to version 5: the index of parked rows with its list predicate.
DROP INDEX IF EXISTS {schema_prefix}{name}_parked_idx;
CREATE INDEX {schema_prefix}{name}_parked_idx ON {name} (status, created_at, id)
    WHERE status IN (2, 3, 4, 5);
