-- One page of delivered entries, from the most recent delivery back, through the index
-- retention walks. $1 topic (NULL: every topic), $2 the last id of the previous page
-- (NULL: the first page), $3 page size, $4 partition key (NULL: any). The page starts before the cursor's
-- (delivered_at, id), read once before the walk; an id that is not a delivered entry
-- gives an empty page.
SELECT t.*
FROM {table} AS t
WHERE t.status = 1
  AND ($1::text IS NULL OR t.topic = $1::text)
  AND ($4::text IS NULL OR t.partition_key = $4::text)
  AND (t.delivered_at, t.id) < (
      COALESCE((SELECT c.delivered_at FROM {table} AS c WHERE c.id = $2::uuid), 'infinity'),
      COALESCE($2::uuid, 'ffffffff-ffff-ffff-ffff-ffffffffffff'))
  AND ($2::uuid IS NULL
       OR EXISTS (SELECT FROM {table} AS c WHERE c.id = $2::uuid AND c.status = 1))
ORDER BY t.delivered_at DESC, t.id DESC
LIMIT $3::bigint
