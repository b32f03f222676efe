-- Pending rows due at ?1, in claim order, leased or not. ?2 topic or NULL, ?3 limit.
SELECT * FROM {table}
WHERE status = 0
  AND (not_before IS NULL OR not_before <= ?1)
  AND (?2 IS NULL OR topic = ?2)
ORDER BY created_at, id
LIMIT ?3
