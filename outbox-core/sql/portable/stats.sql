-- Counts by status (codes 0..5, see EmissionStatus::code), lease states at the request's
-- time (else the database's clock) and the claims made of the rows (a negative claim
-- count, in a row edited by hand, adds nothing), in one pass.
-- Portable: CASE inside count.
WITH clock (clock_now) AS {materialized} (SELECT COALESCE(?, {now}))
SELECT
    count(CASE WHEN status = 0 THEN 1 END),
    count(CASE WHEN status = 1 THEN 1 END),
    count(CASE WHEN status = 2 THEN 1 END),
    count(CASE WHEN status = 3 THEN 1 END),
    count(CASE WHEN status = 4 THEN 1 END),
    count(CASE WHEN status = 5 THEN 1 END),
    count(CASE WHEN status IN (2, 4)
                AND (next_retry_at IS NULL OR next_retry_at <= clock.clock_now) THEN 1 END),
    count(CASE WHEN status NOT IN (1, 5) AND claim_expires_at > clock.clock_now THEN 1 END),
    count(CASE WHEN status NOT IN (1, 5) AND claim_expires_at <= clock.clock_now THEN 1 END),
    CAST(COALESCE(sum(CASE WHEN claim_attempt_count > 0 THEN claim_attempt_count END), 0)
         AS {bigint})
FROM {table} CROSS JOIN clock
