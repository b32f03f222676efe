-- One pass over the table: counts by status, the oldest pending row, lease states judged
-- at ?1 (µs), and the claims made of the rows (their claim counts summed; a count that is
-- no claim count, in a row edited by hand, adds nothing, so the picture is still taken).
SELECT
    coalesce(sum(status = 0), 0) AS pending,
    coalesce(sum(status = 1), 0) AS delivered,
    coalesce(sum(status = 2), 0) AS deferred,
    coalesce(sum(status = 3), 0) AS failed,
    coalesce(sum(status = 4), 0) AS retryable_failure,
    coalesce(sum(status = 5), 0) AS dead_lettered,
    min(CASE WHEN status = 0 THEN created_at END) AS oldest_pending,
    coalesce(sum(status IN (2, 4) AND (next_retry_at IS NULL OR next_retry_at <= ?1)), 0) AS retry_ready,
    coalesce(sum(status NOT IN (1, 5) AND claim_expires_at > ?1), 0) AS in_flight,
    coalesce(sum(status NOT IN (1, 5) AND claim_expires_at <= ?1), 0) AS expired,
    coalesce(sum(CASE WHEN typeof(claim_attempt_count) = 'integer'
                       AND claim_attempt_count BETWEEN 1 AND 4294967295
                      THEN claim_attempt_count END), 0) AS claims_made,
    0 AS delivered_estimated
FROM {table}
