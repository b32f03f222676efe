-- What operators read costs what is live, not the history behind it.
--
-- Rows that wait for something other than a claim of pending rows (2 deferred, 3 failed,
-- 4 retryable failure, 5 dead-lettered), by status in creation order: counting one of
-- these statuses, and a page of one of them, walks that status's rows alone. Pending rows
-- have the pending index; delivered rows, the history, are never walked by a live read
-- (their count is the server's estimate of the table's rows less the live ones).
--
-- Expanding: a store of migration 8 runs on it unchanged (the index and the function
-- are only read by the live reads). Building the index reads the table once and holds
-- writes back while it does.
CREATE INDEX {name}_parked_idx ON {table} (status, created_at, id)
    WHERE status IN (2, 3, 4, 5);

-- The live counts, each status through the partial index that holds it alone (kept
-- since in definitions/live_counts.sql, revision 1 as written here).
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
