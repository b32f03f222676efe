-- Deletes at most ?2 entries in status ?3 (3 failed or 5 dead-lettered): one id, or any
-- when ?1 is NULL; of topic ?4, or any when ?4 is NULL.
DELETE FROM {table}
WHERE id IN (SELECT id FROM {table} WHERE status = ?3 AND (?1 IS NULL OR id = ?1) AND (?4 IS NULL OR topic = ?4) LIMIT ?2)
