-- Claims in per-key order, in key runs, through the table's claim with runs
-- (definitions/claim_runs.sql): of each partition key its head and the run behind it,
-- while none of the key's first rows holds a live lease; keyless rows as claim.sql takes
-- them. Parameters as claim.sql's $1 to $17: the walk of the heads starts at $8 and $9
-- and walks behind them when $10 says (a key's next entry becomes its head when the one
-- before it is delivered, and may be behind the start: see outbox_core::ClaimStarts),
-- and $11 to $17 share the start (sql/claim_share.sql, substituted for the line below).
-- Then $18 the slice count and $19 its index (NULL: every slice), $20 the longest run.
{claim_share}
SELECT *
FROM {schema_prefix}"{name}_claim_runs"($1::timestamptz, $2::text, $3::bigint, $4::text,
                                        $5::bigint, $6::boolean, $7::boolean,
                                        $8::timestamptz, $9::uuid, $10::boolean,
                                        $18::bigint, $19::bigint, $20::bigint)
