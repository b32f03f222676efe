-- Deletes one bounded batch of rows delivered before the cut-off, oldest first.
-- Status code 1 is delivered (see EmissionStatus::code).
DELETE FROM {table}
WHERE id IN (
    SELECT id FROM {table}
    WHERE status = 1 AND delivered_at < ?
    ORDER BY delivered_at, id
    LIMIT ?
)
