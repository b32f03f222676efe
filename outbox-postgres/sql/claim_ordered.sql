-- Claims in per-key order through the table's ordered claim function
-- (definitions/claim_ordered.sql): of each partition key only its head, while none of the key's first rows holds a
-- live lease; keyless rows as claim.sql takes them. Parameters as claim.sql's $1 to $7;
-- a claim of one slice adds $8 the slice count and $9 its index (the line marked
-- {slice_args}). Its walks start at the beginning of their indexes: a key's next row
-- becomes its head when the previous one is delivered, behind any later start.
SELECT *
FROM {schema_prefix}"{name}_claim_ordered"($1::timestamptz, $2::text, $3::bigint, $4::text,
                                           $5::bigint, $6::boolean, $7::boolean
                                           , $8::bigint, $9::bigint {slice_args}
                                           )
