-- Deletes at most ? dead letters: one id, or any when the id is NULL. Parameters: the id
-- (twice), the batch size.
DELETE FROM {table}
WHERE status = 5 AND (? IS NULL OR id = ?)
LIMIT ?
