-- Deletes one bounded batch of dead letters (status 5): one id, or any when NULL.
DELETE FROM {table}
WHERE id IN (
    SELECT id FROM {table}
    WHERE status = 5 AND (? IS NULL OR id = ?)
    LIMIT ?
)
