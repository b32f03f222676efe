-- Leases the $1 oldest pending rows to a slow worker for an hour: live leases at the head
-- of the queue that every claim must get past.
WITH head AS (
    SELECT id FROM {table} WHERE status = 0 ORDER BY created_at, id LIMIT $1::bigint
)
UPDATE {table} AS t
SET claim_owner = 'slow-worker',
    claim_token = gen_random_uuid(),
    claimed_at = now(),
    claim_expires_at = now() + interval '1 hour',
    claim_attempt_count = 1,
    stamp = gen_random_uuid()
FROM head
WHERE t.id = head.id
