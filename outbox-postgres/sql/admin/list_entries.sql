-- One page of entries in one status, in creation order. $1 status, $2 topic (NULL: every
-- topic), $3 the last id of the previous page (NULL: the first page), $4 page size.
SELECT t.*
FROM {table} AS t
WHERE t.status = $1::smallint
  AND ($2::text IS NULL OR t.topic = $2::text)
  AND ($3::uuid IS NULL
       OR (t.created_at, t.id) > (SELECT c.created_at, c.id FROM {table} AS c WHERE c.id = $3::uuid))
ORDER BY t.created_at, t.id
LIMIT $4::bigint
