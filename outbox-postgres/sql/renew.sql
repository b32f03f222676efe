-- Extends the leases of many claims in one statement, through the table's renewal
-- function (definitions/renew.sql). $1 ids, $2 owners, $3 tokens (one element per claim), $4 now
-- (NULL: database clock), $5 new lease in microseconds. Only rows that are not terminal
-- and still hold the claim's owner and token are extended; every locked row comes back
-- once, whole, with `applied` saying whether it was extended.
SELECT *
FROM {schema_prefix}"{name}_renew"($1::uuid[], $2::text[], $3::uuid[], $4::timestamptz,
                                   $5::bigint)
