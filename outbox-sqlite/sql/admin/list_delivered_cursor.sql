-- Where a page of delivered entries starts: before the delivered entry ?1 (the last of
-- the previous page), or for the first page (?1 NULL) after every entry. No row: ?1 is
-- not a delivered entry, and the page is empty.
SELECT c.delivered_at AS from_at, c.id AS from_id, c.rowid AS from_seq
FROM {table} AS c
WHERE c.id = ?1 AND c.status = 1
UNION ALL
SELECT 9223372036854775807, x'', 9223372036854775807 WHERE ?1 IS NULL
