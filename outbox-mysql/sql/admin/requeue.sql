-- Makes entries of one status (3 failed or 5 dead-lettered) pending again with a fresh
-- attempt budget; the last error is kept. Each row gets a new stamp. Parameters: now or
-- NULL (the server's clock), the status, one id or NULL for all (twice), one topic or NULL
-- for every topic (twice).
UPDATE {table}
SET status = 0,
    attempt_count = 0,
    next_retry_at = NULL,
    dead_letter_reason = NULL,
    claim_owner = NULL,
    claim_token = NULL,
    claimed_at = NULL,
    claim_expires_at = NULL,
    updated_at = CAST(COALESCE(?, UTC_TIMESTAMP(6)) AS DATETIME(6)),
    stamp = UNHEX(REPLACE(UUID(), '-', ''))
WHERE status = ? AND (? IS NULL OR id = ?) AND (? IS NULL OR topic = ?)
