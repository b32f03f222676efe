-- The live part of `outbox stats` (sql/admin/live_stats.sql), judged at p_at: rows per
-- status other than delivered, the oldest pending row, retry-ready rows, and the rows
-- of those statuses whose lease runs or ran out. Each status is read through the partial
-- index that holds it alone (pending_idx, retry_idx, parked_idx), so the cost is the live
-- rows whatever the history. Sequential and bitmap scans are priced out, so the plan does
-- not depend on statistics that a burst or a long retention made stale.

CREATE OR REPLACE FUNCTION {schema_prefix}"{name}_live_counts"(p_at timestamptz)
RETURNS TABLE (
    pending bigint, deferred bigint, failed bigint, retryable_failure bigint,
    dead_lettered bigint, oldest_pending timestamptz, retry_ready bigint,
    in_flight bigint, expired bigint)
LANGUAGE sql
STABLE
SET enable_seqscan = off
SET enable_bitmapscan = off
SET jit = off
AS $live$
WITH pending AS (
    SELECT count(*) AS n,
           min(t.created_at) AS oldest,
           count(*) FILTER (WHERE t.claim_expires_at > p_at) AS in_flight,
           count(*) FILTER (WHERE t.claim_expires_at <= p_at) AS expired
    FROM {table} AS t
    WHERE t.status = 0
),
retrying AS (
    SELECT count(*) FILTER (WHERE t.status = 2) AS deferred,
           count(*) FILTER (WHERE t.status = 4) AS retryable_failure,
           count(*) FILTER (WHERE t.next_retry_at IS NULL OR t.next_retry_at <= p_at)
               AS retry_ready,
           count(*) FILTER (WHERE t.claim_expires_at > p_at) AS in_flight,
           count(*) FILTER (WHERE t.claim_expires_at <= p_at) AS expired
    FROM {table} AS t
    WHERE t.status IN (2, 4)
),
parked AS (
    SELECT count(*) FILTER (WHERE t.status = 3) AS failed,
           count(*) FILTER (WHERE t.status = 5) AS dead_lettered,
           count(*) FILTER (WHERE t.status = 3 AND t.claim_expires_at > p_at) AS in_flight,
           count(*) FILTER (WHERE t.status = 3 AND t.claim_expires_at <= p_at) AS expired
    FROM {table} AS t
    WHERE t.status IN (3, 5)
)
SELECT pending.n, retrying.deferred, parked.failed, retrying.retryable_failure,
       parked.dead_lettered, pending.oldest, retrying.retry_ready,
       pending.in_flight + retrying.in_flight + parked.in_flight,
       pending.expired + retrying.expired + parked.expired
FROM pending, retrying, parked
$live$;
