-- Deletes one bounded batch of dead letters (status 5): one id, or any when NULL. The
-- batch is chosen in a derived table of its own, for MySQL and MariaDB (see
-- prune_delivered.sql).
DELETE FROM {table}
WHERE id IN (
    SELECT id FROM (
        SELECT id FROM {table}
        WHERE status = 5 AND (? IS NULL OR id = ?)
        LIMIT ?
    ) AS doomed
)
