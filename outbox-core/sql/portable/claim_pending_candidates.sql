-- Claim step 1 of 1 + 2N: the ordered ids of claimable pending rows. The clock column
-- carries the one instant (the request's, else the database's) that the re-checks and
-- writes of this claim use, so reading the clock costs no command of its own.
-- Status codes: 0 pending (see EmissionStatus::code).
WITH clock (clock_now) AS MATERIALIZED (SELECT COALESCE(?, {now}))
SELECT clock.clock_now, id
FROM {table} CROSS JOIN clock
WHERE status = 0
  AND (not_before IS NULL OR not_before <= clock.clock_now)
  AND (claim_expires_at IS NULL OR claim_expires_at <= clock.clock_now)
  AND (? IS NULL OR topic = ?)
ORDER BY created_at, id
LIMIT ?
