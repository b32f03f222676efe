-- Claim step 1 of 1 + 2N for retry-ready rows, in retry order; parameters and the slice
-- and key order filters as in claim_pending_candidates.sql.
-- Status codes: 2 deferred, 4 retryable failure (see EmissionStatus::code).
WITH clock (clock_now) AS {materialized} (SELECT COALESCE(?, {now}))
SELECT clock.clock_now, id
FROM {table} AS t CROSS JOIN clock
WHERE status IN (2, 4)
  AND (next_retry_at IS NULL OR next_retry_at <= clock.clock_now)
  AND (claim_expires_at IS NULL OR claim_expires_at <= clock.clock_now)
  AND (? IS NULL OR topic = ?)
{slice_filter}
{key_order_filter}
ORDER BY COALESCE(next_retry_at, updated_at), id
LIMIT ?
