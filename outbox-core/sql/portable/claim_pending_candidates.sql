-- Claim step 1 of 1 + 2N: the ordered ids of claimable pending rows. The clock column
-- carries the one instant (the request's, else the database's) that the re-checks and
-- writes of this claim use, so reading the clock costs no command of its own.
-- Status codes: 0 pending, 1 delivered, 5 dead-lettered (see EmissionStatus::code).
--
-- Parameters: the request's time (NULL: the database clock), the topic (twice), the slice
-- count (0: no slice) and again as the divisor (1 without a slice), the slice index,
-- whether to claim in key order (1) or not (0), the batch size.
-- A slice keeps the rows whose stored slice hash is in it, and rows without a stored hash
-- (the store judges those by hashing their key). In key order a keyed row is a candidate
-- only while no row of its key that is not yet delivered or dead-lettered is older, or
-- holds a live lease (the check walks the key's rows: prepare the table for ordered
-- claims for the index that makes it a seek).
WITH clock (clock_now) AS MATERIALIZED (SELECT COALESCE(?, {now}))
SELECT clock.clock_now, id
FROM {table} AS t CROSS JOIN clock
WHERE status = 0
  AND (not_before IS NULL OR not_before <= clock.clock_now)
  AND (claim_expires_at IS NULL OR claim_expires_at <= clock.clock_now)
  AND (? IS NULL OR topic = ?)
{keyed_filter}
ORDER BY created_at, id
LIMIT ?
