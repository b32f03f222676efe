-- The raw-SQL ceiling for SQLite, claim half: the store's claim statement, returning only
-- what the completion needs. ?1 now (µs), ?2 lease expiry (µs), ?3 batch size.
UPDATE {table}
SET claim_owner = 'raw-sql',
    claim_token = randomblob(16),
    claimed_at = ?1,
    claim_expires_at = ?2,
    claim_attempt_count = claim_attempt_count + 1,
    stamp = randomblob(16)
WHERE id IN (
        SELECT id FROM {table}
        WHERE status = 0
          AND (not_before IS NULL OR not_before <= ?1)
          AND (claim_expires_at IS NULL OR claim_expires_at <= ?1)
        ORDER BY created_at, id
        LIMIT ?3)
  AND status = 0
RETURNING id, claim_token
