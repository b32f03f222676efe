-- One pass over the table: counts by status, the oldest pending row, lease states judged
-- at ? (NULL: the server's clock), which comes back as `clock_now`, and the claims made of
-- the rows (their claim counts summed; a negative one, in a row edited by hand, adds
-- nothing).
SELECT
    CAST(COALESCE(SUM(t.status = 0), 0) AS SIGNED) AS pending,
    CAST(COALESCE(SUM(t.status = 1), 0) AS SIGNED) AS delivered,
    CAST(COALESCE(SUM(t.status = 2), 0) AS SIGNED) AS deferred,
    CAST(COALESCE(SUM(t.status = 3), 0) AS SIGNED) AS failed,
    CAST(COALESCE(SUM(t.status = 4), 0) AS SIGNED) AS retryable_failure,
    CAST(COALESCE(SUM(t.status = 5), 0) AS SIGNED) AS dead_lettered,
    MIN(CASE WHEN t.status = 0 THEN t.created_at END) AS oldest_pending,
    CAST(COALESCE(SUM(t.status IN (2, 4)
        AND (t.next_retry_at IS NULL OR t.next_retry_at <= p.clock_now)), 0) AS SIGNED) AS retry_ready,
    CAST(COALESCE(SUM(t.status NOT IN (1, 5)
        AND t.claim_expires_at > p.clock_now), 0) AS SIGNED) AS in_flight,
    CAST(COALESCE(SUM(t.status NOT IN (1, 5)
        AND t.claim_expires_at <= p.clock_now), 0) AS SIGNED) AS expired,
    CAST(COALESCE(SUM(CASE WHEN t.claim_attempt_count > 0
        THEN t.claim_attempt_count END), 0) AS SIGNED) AS claims_made,
    CAST(0 AS SIGNED) AS delivered_estimated,
    MAX(p.clock_now) AS clock_now
FROM (SELECT CAST(COALESCE(?, UTC_TIMESTAMP(6)) AS DATETIME(6)) AS clock_now) AS p
LEFT JOIN {table} AS t ON TRUE
