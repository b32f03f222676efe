-- Claims in per-key order, in key runs, through the table's claim with runs
-- (definitions/claim_runs.sql): of each partition key its head and the run behind it,
-- while none of the key's first rows holds a live lease; keyless rows as claim.sql takes
-- them. Parameters as claim.sql's $1 to $7, then $8 the slice count and $9 its index
-- (NULL: every slice), $10 the longest run. Its walks start at the beginning of their
-- indexes: a key's next row becomes its head when the previous one is delivered, behind
-- any later start.
SELECT *
FROM {schema_prefix}"{name}_claim_runs"($1::timestamptz, $2::text, $3::bigint, $4::text,
                                        $5::bigint, $6::boolean, $7::boolean,
                                        $8::bigint, $9::bigint, $10::bigint)
