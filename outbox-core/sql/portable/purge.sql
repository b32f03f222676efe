-- Deletes one bounded batch of the entries in one status (3 failed or 5 dead-lettered):
-- one id (or any when NULL), of one topic (or any when NULL). Binds: the status twice, the
-- id twice, the topic twice, the batch size. The status is checked again by the delete itself, so a row
-- that changed status since the batch was chosen stays. The batch is chosen in a derived
-- table of its own, for MySQL and MariaDB (see prune_delivered.sql).
DELETE FROM {table}
WHERE status = ?
  AND id IN (
    SELECT id FROM (
        SELECT id FROM {table}
        WHERE status = ? AND (? IS NULL OR id = ?) AND (? IS NULL OR topic = ?)
        LIMIT ?
    ) AS doomed
)
