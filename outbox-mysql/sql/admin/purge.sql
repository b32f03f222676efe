-- Deletes at most ? entries in one status (3 failed or 5 dead-lettered): one id, or any
-- when the id is NULL; of one topic, or any when it is NULL. Parameters: the status, the
-- id (twice), the topic (twice), the batch size.
DELETE FROM {table}
WHERE status = ? AND (? IS NULL OR id = ?) AND (? IS NULL OR topic = ?)
LIMIT ?
