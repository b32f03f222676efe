-- Deletes up to ? rows delivered before ?, oldest delivery first: the delivered index's
-- range, in order. Parameters: the cut-off, the batch size.
DELETE FROM {table}
WHERE status = 1 AND delivered_at < ?
ORDER BY delivered_at
LIMIT ?
