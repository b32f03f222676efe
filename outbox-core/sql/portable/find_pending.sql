-- Pending rows due at the request's time, leased or not, in claim order.
-- Status codes: 0 pending (see EmissionStatus::code).
WITH clock (clock_now) AS MATERIALIZED (SELECT COALESCE(?, {now}))
SELECT clock.clock_now, {columns}
FROM {table} CROSS JOIN clock
WHERE status = 0
  AND (not_before IS NULL OR not_before <= clock.clock_now)
  AND (? IS NULL OR topic = ?)
ORDER BY created_at, id
LIMIT ?
