-- Deletes at most ?2 entries in status ?3 (3 failed or 5 dead-lettered): one id, or any
-- when ?1 is NULL.
DELETE FROM {table}
WHERE id IN (SELECT id FROM {table} WHERE status = ?3 AND (?1 IS NULL OR id = ?1) LIMIT ?2)
