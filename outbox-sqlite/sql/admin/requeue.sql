-- Makes entries of one status (3 failed or 5 dead-lettered) pending again with a fresh
-- attempt budget; the last error is kept. ?1 now (µs), ?2 one id or NULL for all,
-- ?3 the status, ?4 one topic or NULL for every topic.
UPDATE {table}
SET status = 0,
    attempt_count = 0,
    next_retry_at = NULL,
    dead_letter_reason = NULL,
    claim_owner = NULL,
    claim_token = NULL,
    claimed_at = NULL,
    claim_expires_at = NULL,
    updated_at = ?1,
    stamp = randomblob(16)
WHERE status = ?3 AND (?2 IS NULL OR id = ?2) AND (?4 IS NULL OR topic = ?4)
