-- Leases the ?1 oldest pending rows to a slow worker for an hour.
UPDATE {table}
SET claim_owner = 'slow-worker',
    claim_token = randomblob(16),
    claimed_at = unixepoch() * 1000000,
    claim_expires_at = (unixepoch() + 3600) * 1000000,
    claim_attempt_count = 1,
    stamp = randomblob(16)
WHERE id IN (SELECT id FROM {table} WHERE status = 0 ORDER BY created_at, id LIMIT ?1)
