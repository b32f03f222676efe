-- The retry-ready rows due at $1 (NULL: database clock), leased or not, in retry order;
-- $2 topic filter (NULL: every topic), $3 limit. Reads only; locks nothing.
SELECT *
FROM {table}
WHERE status IN (2, 4)
  AND (next_retry_at IS NULL OR next_retry_at <= COALESCE($1::timestamptz, now()))
  AND ($2::text IS NULL OR topic = $2::text)
ORDER BY COALESCE(next_retry_at, updated_at), id
LIMIT $3::bigint
