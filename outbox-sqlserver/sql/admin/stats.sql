-- Counts by status (0 pending, 1 delivered, 2 deferred, 3 failed, 4 retryable failure,
-- 5 dead-lettered), the oldest pending row, lease states judged at @P1 or the server's
-- clock, and the claims made of the rows (their claim counts summed as bigint; a
-- negative one, in a row edited by hand, adds nothing), in one pass. Reads only.
SET NOCOUNT ON;
DECLARE @now datetime2(6) = COALESCE(@P1, SYSUTCDATETIME());
SELECT @now AS at,
       COUNT_BIG(CASE WHEN status = 0 THEN 1 END) AS pending,
       COUNT_BIG(CASE WHEN status = 1 THEN 1 END) AS delivered,
       COUNT_BIG(CASE WHEN status = 2 THEN 1 END) AS deferred,
       COUNT_BIG(CASE WHEN status = 3 THEN 1 END) AS failed,
       COUNT_BIG(CASE WHEN status = 4 THEN 1 END) AS retryable_failure,
       COUNT_BIG(CASE WHEN status = 5 THEN 1 END) AS dead_lettered,
       MIN(CASE WHEN status = 0 THEN created_at END) AS oldest_pending,
       COUNT_BIG(CASE WHEN status IN (2, 4)
                                AND (next_retry_at IS NULL OR next_retry_at <= @now) THEN 1 END) AS retry_ready,
       COUNT_BIG(CASE WHEN status NOT IN (1, 5) AND claim_expires_at > @now THEN 1 END) AS in_flight,
       COUNT_BIG(CASE WHEN status NOT IN (1, 5) AND claim_expires_at <= @now THEN 1 END) AS expired,
       COALESCE(SUM(CASE WHEN claim_attempt_count > 0
                         THEN CAST(claim_attempt_count AS bigint) END), 0) AS claims_made,
       CAST(0 AS bigint) AS delivered_estimated
FROM {table};
