-- The columns of stats.sql at the cost of the live rows: each status but delivered is
-- read through the partial index that holds it alone (each WHERE repeats its index's
-- condition word for word, which is how SQLite matches a partial index), and delivered
-- is the table's row count (kept by the triggers of migration 5) less the live rows, so
-- it is exact without reading the history. The claims made are not summed (they would
-- read every row). Leases are judged at ?1 (µs).
WITH pending AS (
    SELECT count(*) AS n,
           min(created_at) AS oldest,
           coalesce(sum(claim_expires_at > ?1), 0) AS in_flight,
           coalesce(sum(claim_expires_at <= ?1), 0) AS expired
    FROM {table}
    WHERE status = 0
),
retrying AS (
    SELECT coalesce(sum(status = 2), 0) AS deferred,
           coalesce(sum(status = 4), 0) AS retryable_failure,
           coalesce(sum(next_retry_at IS NULL OR next_retry_at <= ?1), 0) AS retry_ready,
           coalesce(sum(claim_expires_at > ?1), 0) AS in_flight,
           coalesce(sum(claim_expires_at <= ?1), 0) AS expired
    FROM {table}
    WHERE status IN (2, 4)
),
parked AS (
    SELECT coalesce(sum(status = 3), 0) AS failed,
           coalesce(sum(status = 5), 0) AS dead_lettered,
           coalesce(sum(status = 3 AND claim_expires_at > ?1), 0) AS in_flight,
           coalesce(sum(status = 3 AND claim_expires_at <= ?1), 0) AS expired
    FROM {table}
    WHERE status >= 2 AND status IN (3, 5)
),
live AS (
    SELECT pending.n + retrying.deferred + retrying.retryable_failure + parked.failed
           + parked.dead_lettered AS n
    FROM pending, retrying, parked
)
SELECT pending.n AS pending,
       max(coalesce((SELECT c.n FROM {schema_prefix}{name}_row_count AS c WHERE c.one = 1), 0)
           - live.n, 0) AS delivered,
       retrying.deferred AS deferred,
       parked.failed AS failed,
       retrying.retryable_failure AS retryable_failure,
       parked.dead_lettered AS dead_lettered,
       pending.oldest AS oldest_pending,
       retrying.retry_ready AS retry_ready,
       pending.in_flight + retrying.in_flight + parked.in_flight AS in_flight,
       pending.expired + retrying.expired + parked.expired AS expired,
       NULL AS claims_made,
       0 AS delivered_estimated
FROM pending, retrying, parked, live
