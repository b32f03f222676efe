-- Claims through the table's claim function (migrations 0002 and 0005), which takes the
-- batch by an ordered index walk whatever the table's statistics say. $1 now (NULL: the
-- database clock), $2 topic filter (NULL: every topic), $3 batch size, $4 owner, $5 lease
-- in microseconds, $6 take retry-ready rows, $7 take pending rows (retry-ready ones
-- first), $8 slice count (NULL: every slice) and $9 slice index.
SELECT *
FROM {schema_prefix}"{name}_claim"($1::timestamptz, $2::text, $3::bigint, $4::text,
                                   $5::bigint, $6::boolean, $7::boolean, $8::bigint,
                                   $9::bigint)
