-- Claims through the table's claim function (migrations 0002, 0003 and 0005), which takes
-- the batch by an ordered index walk whatever the table's statistics say. $1 now (NULL:
-- the database clock), $2 topic filter (NULL: every topic), $3 batch size, $4 owner, $5
-- lease in microseconds, $6 take retry-ready rows, $7 take pending rows (retry-ready ones
-- first); a claim of one slice adds $8 the slice count and $9 its index and calls the
-- nine-argument function (migration 0005). A claim of every slice leaves the line marked
-- {slice_args} out and calls the seven-argument one, whose walks carry no slice condition
-- (measured: the condition alone cost a server-side loop of claims about 15%).
SELECT *
FROM {schema_prefix}"{name}_claim"($1::timestamptz, $2::text, $3::bigint, $4::text,
                                   $5::bigint, $6::boolean, $7::boolean
                                   , $8::bigint, $9::bigint {slice_args}
                                   )
