-- The oldest pending rows due at $1 (NULL: database clock), leased or not, in pending
-- order; $2 topic filter (NULL: every topic), $3 limit. Reads only; locks nothing.
SELECT *
FROM {table}
WHERE status = 0
  AND (not_before IS NULL OR not_before <= COALESCE($1::timestamptz, now()))
  AND ($2::text IS NULL OR topic = $2::text)
ORDER BY created_at, id
LIMIT $3::bigint
