-- The oldest pending rows due at $1 (NULL: database clock), leased or not, in pending
-- order; $2 topic filter (NULL: every topic), $3 limit, $4 slice count (NULL: every
-- slice) and $5 slice index (a row without a stored slice hash is hashed by the table's
-- function). Reads only; locks nothing.
SELECT *
FROM {table} AS t
WHERE status = 0
  AND (not_before IS NULL OR not_before <= COALESCE($1::timestamptz, now()))
  AND ($2::text IS NULL OR topic = $2::text)
  AND ($4::bigint IS NULL
       OR COALESCE(t.slice_hash, {schema_prefix}"{name}_slice_hash"(t.partition_key, t.id))
          % $4::bigint = $5::bigint)
ORDER BY created_at, id
LIMIT $3::bigint
