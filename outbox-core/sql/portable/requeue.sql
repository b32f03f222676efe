-- Makes entries of one status (3 failed or 5 dead-lettered) pending (0) again with a fresh
-- attempt budget; the last error is kept. Binds: updated_at (or NULL for the database's
-- clock), the new stamp, the status, then one id twice (or NULL twice for all), then one
-- topic twice (or NULL twice for every topic). Every row
-- gets the same new stamp, which is still new for each of them; stamps are only ever
-- compared per row.
UPDATE {table}
SET status = 0,
    attempt_count = 0,
    next_retry_at = NULL,
    dead_letter_reason = NULL,
    claim_owner = NULL,
    claim_token = NULL,
    claimed_at = NULL,
    claim_expires_at = NULL,
    updated_at = COALESCE(?, {now}),
    stamp = ?
WHERE status = ? AND (? IS NULL OR id = ?) AND (? IS NULL OR topic = ?)
