-- Deletes one bounded batch of rows delivered before the cut-off, oldest first.
-- Status code 1 is delivered (see EmissionStatus::code). The batch is chosen in a derived
-- table of its own: MySQL and MariaDB take neither a LIMIT inside `IN (…)` nor a subquery
-- on the table being deleted from, but both read a derived table with a LIMIT first.
DELETE FROM {table}
WHERE id IN (
    SELECT id FROM (
        SELECT id FROM {table}
        WHERE status = 1 AND delivered_at < ?
        ORDER BY delivered_at, id
        LIMIT ?
    ) AS doomed
)
