-- Deletes at most ?2 delivered rows delivered before ?1, oldest first.
DELETE FROM {table}
WHERE id IN (
    SELECT id FROM {table}
    WHERE status = 1 AND delivered_at < ?1
    ORDER BY delivered_at
    LIMIT ?2)
