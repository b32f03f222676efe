-- Claims in per-key order start their walk of the heads at a learned key, as the plain
-- claim does (outbox_core::ClaimStarts): the claim in key runs gains a form with the
-- start (p_from_created, p_from_id, p_behind) before the slice and the run. The body
-- here is a stand-in that walks from the beginning; the definitions applied after the
-- migrations (definitions/claim_runs.sql, revision 4) restate it with the walk from the
-- start, and the ten-parameter form as the claim with no start.
--
-- Expanding: a drain of the previous release calls the ten-parameter form, which claims
-- as it did.
CREATE OR REPLACE FUNCTION {schema_prefix}"{name}_claim_runs"(
    p_now timestamptz, p_topic text, p_limit bigint, p_owner text, p_lease_us bigint,
    p_retry boolean, p_pending boolean, p_from_created timestamptz, p_from_id uuid,
    p_behind boolean, p_slices bigint, p_slice bigint, p_run bigint)
RETURNS SETOF {table}
LANGUAGE sql
VOLATILE
AS $claim$
SELECT *
FROM {schema_prefix}"{name}_claim_runs"(p_now, p_topic, p_limit, p_owner, p_lease_us,
                                        p_retry, p_pending, p_slices, p_slice, p_run)
$claim$;
