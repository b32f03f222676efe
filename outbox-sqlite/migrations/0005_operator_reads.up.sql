-- What operators read costs what is live, not the history behind it.
--
-- Rows that wait for something other than a claim of pending rows (2 deferred, 3 failed,
-- 4 retryable failure, 5 dead-lettered), by status in creation order: counting one of
-- these statuses, and a page of one of them, walks that status's rows alone. Pending rows
-- have the pending index.
CREATE INDEX {schema_prefix}{name}_parked_idx ON {name} (status, created_at, id)
    WHERE status IN (2, 3, 4, 5);

-- How many rows the table holds, kept by triggers on every insert and delete, whoever
-- writes (this release, an earlier one, the host's own SQL, an operator): the live stats
-- take delivered as this count less the live rows, so they never count the history. An
-- update never changes it, so the drain's claims and completions do not touch it. One
-- row: SQLite writes one transaction at a time, so it is never contended.
CREATE TABLE {schema_prefix}{name}_row_count (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    n   INTEGER NOT NULL
);
INSERT INTO {schema_prefix}{name}_row_count (one, n) SELECT 1, count(*) FROM {table};
CREATE TRIGGER {schema_prefix}{name}_count_insert AFTER INSERT ON {name}
BEGIN
    UPDATE {name}_row_count SET n = n + 1 WHERE one = 1;
END;
CREATE TRIGGER {schema_prefix}{name}_count_delete AFTER DELETE ON {name}
BEGIN
    UPDATE {name}_row_count SET n = n - 1 WHERE one = 1;
END;
