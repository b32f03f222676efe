-- One page of entries in one live status ({status}, written in so the planner reads the
-- index that holds that status alone), in creation order. $1 topic (NULL: every topic),
-- $2 the last id of the previous page (NULL: the first page), $3 page size, $4 partition key (NULL: any). The page
-- starts after the cursor's (created_at, id), read once before the walk; an id that is
-- not in the table gives an empty page.
SELECT t.*
FROM {table} AS t
WHERE t.status = {status}
  AND ($1::text IS NULL OR t.topic = $1::text)
  AND ($4::text IS NULL OR t.partition_key = $4::text)
  AND (t.created_at, t.id) > (
      COALESCE((SELECT c.created_at FROM {table} AS c WHERE c.id = $2::uuid), '-infinity'),
      COALESCE($2::uuid, '00000000-0000-0000-0000-000000000000'))
  AND ($2::uuid IS NULL OR EXISTS (SELECT FROM {table} AS c WHERE c.id = $2::uuid))
ORDER BY t.created_at, t.id
LIMIT $3::bigint
