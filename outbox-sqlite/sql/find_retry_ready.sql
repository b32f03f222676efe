-- Deferred and retryable rows due at ?1, in retry order, leased or not. ?2 topic or NULL,
-- ?3 limit, ?4 slice count and ?5 slice index (the slice line is left out of the
-- unsliced form).
SELECT * FROM {table} AS t
WHERE status IN (2, 4)
  AND (next_retry_at IS NULL OR next_retry_at <= ?1)
  AND (?2 IS NULL OR topic = ?2)
  AND {slice_hash} % ?4 = ?5
ORDER BY coalesce(next_retry_at, updated_at), id
LIMIT ?3
