-- Claims through the table's claim function (definitions/claim.sql),
-- which takes the batch by an ordered index walk whatever the table's statistics say. $1
-- now (NULL: the database clock), $2 topic filter (NULL: every topic), $3 batch size, $4
-- owner, $5 lease in microseconds, $6 take retry-ready rows, $7 take pending rows
-- (retry-ready ones first), $8 and $9 the pending key the pending walk starts at (NULL:
-- the beginning of the index), $10 whether a walk that comes up short walks behind that
-- key too (see outbox_core::ClaimStarts). A claim of one slice adds $18 the slice count
-- and $19 its index and calls the twelve-argument function; a claim of every slice leaves
-- the line marked {slice_args} out and calls the ten-argument one, whose walks carry no
-- slice condition (measured: the condition alone cost a server-side loop of claims about
-- 15%).
--
-- $11 to $17 share where this store's claims start with the table's other stores, in
-- the same statement (sql/claim_share.sql, substituted for the line below).
{claim_share}
SELECT *
FROM {schema_prefix}"{name}_claim"($1::timestamptz, $2::text, $3::bigint, $4::text,
                                   $5::bigint, $6::boolean, $7::boolean,
                                   $8::timestamptz, $9::uuid, $10::boolean
                                   , $18::bigint, $19::bigint {slice_args}
                                   )
