-- Deferred and retryable rows due at the request's time, leased or not, in retry order;
-- the slice filter and its parameters as in claim_pending_candidates.sql.
-- Status codes: 2 deferred, 4 retryable failure (see EmissionStatus::code).
WITH clock (clock_now) AS {materialized} (SELECT COALESCE(?, {now}))
SELECT clock.clock_now, {columns}
FROM {table} CROSS JOIN clock
WHERE status IN (2, 4)
  AND (next_retry_at IS NULL OR next_retry_at <= clock.clock_now)
  AND (? IS NULL OR topic = ?)
{slice_filter}
ORDER BY COALESCE(next_retry_at, updated_at), id
LIMIT ?
