-- The index of parked rows (migration 5) with a range for its predicate instead of a list.
-- SQLite checks a partial index's `status IN (…)` through a temporary table it builds for
-- every statement that changes a row's status, and probes it for each row's old and new
-- status: the drain's batch completion cost about 4% more instructions with it
-- (callgrind, 20,000 entries delivered by a noop drain). `status >= 2` holds the same
-- rows (the table's CHECK keeps status at 5 or below) and costs a comparison.
--
-- Expanding: a store of version 4 or 5 runs on it unchanged. Version 5 spells its live
-- reads of parked rows for the old predicate, so until it is upgraded those read the
-- table instead of the index (slower, never wrong).
DROP INDEX IF EXISTS {schema_prefix}{name}_parked_idx;
CREATE INDEX {schema_prefix}{name}_parked_idx ON {name} (status, created_at, id)
    WHERE status >= 2;
