-- Where a page of a live status starts: after the entry ?1 (the last of the previous
-- page), or for the first page (?1 NULL) before every entry. No row: ?1 is not in the
-- table, and the page is empty.
SELECT c.created_at AS from_at, c.id AS from_id, c.rowid AS from_seq
FROM {table} AS c
WHERE c.id = ?1
UNION ALL
SELECT -9223372036854775808, x'', 0 WHERE ?1 IS NULL
