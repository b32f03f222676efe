-- The columns of stats.sql at the cost of the live rows, judged at @P1 or the server's
-- clock: each status but delivered is read through the filtered index that holds it
-- alone (pending_ix, retry_ix, parked_ix, each carrying the lease and retry times), and
-- delivered is the row count the server keeps for the table (sys.partitions, heap or
-- clustered index) less the live rows. The claims made are not summed (they would read
-- every row). Reads only.
SET NOCOUNT ON;
DECLARE @now datetime2(6) = COALESCE(@P1, SYSUTCDATETIME());
DECLARE @rows bigint = (SELECT SUM(p.rows) FROM sys.partitions AS p
                        WHERE p.object_id = OBJECT_ID(N'{table}') AND p.index_id IN (0, 1));
WITH pending AS (
    SELECT COUNT_BIG(*) AS n,
           MIN(created_at) AS oldest,
           COUNT_BIG(CASE WHEN claim_expires_at > @now THEN 1 END) AS in_flight,
           COUNT_BIG(CASE WHEN claim_expires_at <= @now THEN 1 END) AS expired
    FROM {table} WITH (INDEX([{name}_pending_ix]))
    WHERE status = 0
),
parked AS (
    SELECT COUNT_BIG(CASE WHEN status = 2 THEN 1 END) AS deferred,
           COUNT_BIG(CASE WHEN status = 3 THEN 1 END) AS failed,
           COUNT_BIG(CASE WHEN status = 4 THEN 1 END) AS retryable_failure,
           COUNT_BIG(CASE WHEN status = 5 THEN 1 END) AS dead_lettered,
           COUNT_BIG(CASE WHEN status IN (2, 4)
                                AND (next_retry_at IS NULL OR next_retry_at <= @now)
                          THEN 1 END) AS retry_ready,
           COUNT_BIG(CASE WHEN status <> 5 AND claim_expires_at > @now THEN 1 END) AS in_flight,
           COUNT_BIG(CASE WHEN status <> 5 AND claim_expires_at <= @now THEN 1 END) AS expired
    FROM {table} WITH (INDEX([{name}_parked_ix]))
    WHERE status IN (2, 3, 4, 5)
)
SELECT @now AS at,
       pending.n AS pending,
       CASE WHEN COALESCE(@rows, 0) > pending.n + parked.deferred + parked.failed
                                      + parked.retryable_failure + parked.dead_lettered
            THEN COALESCE(@rows, 0) - (pending.n + parked.deferred + parked.failed
                                       + parked.retryable_failure + parked.dead_lettered)
            ELSE 0 END AS delivered,
       parked.deferred AS deferred,
       parked.failed AS failed,
       parked.retryable_failure AS retryable_failure,
       parked.dead_lettered AS dead_lettered,
       pending.oldest AS oldest_pending,
       parked.retry_ready AS retry_ready,
       pending.in_flight + parked.in_flight AS in_flight,
       pending.expired + parked.expired AS expired,
       CAST(NULL AS bigint) AS claims_made,
       CAST(1 AS bigint) AS delivered_estimated
FROM pending CROSS JOIN parked;
