-- Pending rows due at the request's time, leased or not, in claim order; the slice
-- filter and its parameters as in claim_pending_candidates.sql.
-- Status codes: 0 pending (see EmissionStatus::code).
WITH clock (clock_now) AS {materialized} (SELECT COALESCE(?, {now}))
SELECT clock.clock_now, {columns}
FROM {table} CROSS JOIN clock
WHERE status = 0
  AND (not_before IS NULL OR not_before <= clock.clock_now)
  AND (? IS NULL OR topic = ?)
{slice_filter}
ORDER BY created_at, id
LIMIT ?
