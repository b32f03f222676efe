-- Claims through the table's claim function (migration 0002), which takes the batch by an
-- ordered index walk whatever the table's statistics say. $1 now (NULL: the database
-- clock), $2 topic filter (NULL: every topic), $3 batch size, $4 owner, $5 lease in
-- microseconds, $6 take retry-ready rows, $7 take pending rows (retry-ready ones first).
SELECT *
FROM {schema_prefix}"{name}_claim"($1::timestamptz, $2::text, $3::bigint, $4::text,
                                   $5::bigint, $6::boolean, $7::boolean)
