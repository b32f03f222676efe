-- Counts by status (0 pending, 1 delivered, 2 deferred, 3 failed, 4 retryable failure,
-- 5 dead-lettered), the oldest pending row and lease states judged at clock.at, and the
-- claims made of the rows (their claim counts summed; a negative one, in a row edited by
-- hand, adds nothing), in one pass over every row. The outer join keeps one row for an
-- empty table. Part of stats.sql.
    SELECT clock.at,
           count(*) FILTER (WHERE status = 0) AS pending,
           count(*) FILTER (WHERE status = 1) AS delivered,
           count(*) FILTER (WHERE status = 2) AS deferred,
           count(*) FILTER (WHERE status = 3) AS failed,
           count(*) FILTER (WHERE status = 4) AS retryable_failure,
           count(*) FILTER (WHERE status = 5) AS dead_lettered,
           min(created_at) FILTER (WHERE status = 0) AS oldest_pending,
           count(*) FILTER (WHERE status IN (2, 4)
                              AND (next_retry_at IS NULL OR next_retry_at <= clock.at)) AS retry_ready,
           count(*) FILTER (WHERE status NOT IN (1, 5) AND claim_expires_at > clock.at) AS in_flight,
           count(*) FILTER (WHERE status NOT IN (1, 5) AND claim_expires_at <= clock.at) AS expired,
           coalesce(sum(claim_attempt_count) FILTER (WHERE claim_attempt_count > 0), 0)::bigint
               AS claims_made,
           false AS delivered_estimated
    FROM clock LEFT JOIN {table} ON true
    GROUP BY clock.at
