-- Deletes at most ?2 dead letters (one id, or any when ?1 is NULL).
DELETE FROM {table}
WHERE id IN (SELECT id FROM {table} WHERE status = 5 AND (?1 IS NULL OR id = ?1) LIMIT ?2)
