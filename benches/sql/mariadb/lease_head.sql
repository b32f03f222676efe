-- Leases the ? oldest pending rows to a slow worker for an hour: live leases at the head
-- of the queue that every claim must get past.
UPDATE {table}
SET claim_owner = 'slow-worker',
    claim_token = UNHEX(MD5(RAND())),
    claimed_at = UTC_TIMESTAMP(6),
    claim_expires_at = UTC_TIMESTAMP(6) + INTERVAL 1 HOUR,
    claim_attempt_count = 1,
    stamp = UNHEX(MD5(RAND()))
WHERE status = 0
ORDER BY created_at, id
LIMIT ?
