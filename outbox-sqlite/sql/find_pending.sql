-- Pending rows due at ?1, in claim order, leased or not. ?2 topic or NULL, ?3 limit,
-- ?4 slice count and ?5 slice index (the slice line is left out of the unsliced form).
SELECT * FROM {table} AS t
WHERE status = 0
  AND (not_before IS NULL OR not_before <= ?1)
  AND (?2 IS NULL OR topic = ?2)
  AND {slice_hash} % ?4 = ?5
ORDER BY created_at, id
LIMIT ?3
