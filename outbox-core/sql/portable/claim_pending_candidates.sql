-- Claim step 1 of 1 + 2N: the ordered ids of claimable pending rows. The clock column
-- carries the one instant (the request's, else the database's) that the re-checks and
-- writes of this claim use, so reading the clock costs no command of its own.
-- Status codes: 0 pending, 1 delivered, 5 dead-lettered (see EmissionStatus::code).
--
-- Parameters: the request's time (NULL: the database clock), the topic (twice), the slice
-- count and index (sliced claims only), the batch size. The two filter lines are
-- replaced by slice_filter.sql and key_order_filter.sql in the forms that need them, and
-- dropped from the others. The key order check walks the key's rows: prepare the table
-- for ordered claims for the index that makes it a seek.
WITH clock (clock_now) AS {materialized} (SELECT COALESCE(?, {now}))
SELECT clock.clock_now, id
FROM {table} AS t CROSS JOIN clock
WHERE status = 0
  AND (not_before IS NULL OR not_before <= clock.clock_now)
  AND (claim_expires_at IS NULL OR claim_expires_at <= clock.clock_now)
  AND (? IS NULL OR topic = ?)
{slice_filter}
{key_order_filter}
ORDER BY created_at, id
LIMIT ?
