-- The raw-SQL ceiling for SQLite, completion half: one token-checked delivered update per
-- row, all in one immediate transaction. ?1 now (µs), ?2 id, ?3 token.
UPDATE {table}
SET status = 1,
    delivered_at = ?1,
    updated_at = ?1,
    stamp = randomblob(16),
    claim_owner = NULL,
    claim_token = NULL,
    claimed_at = NULL,
    claim_expires_at = NULL
WHERE id = ?2 AND claim_owner = 'raw-sql' AND claim_token = ?3 AND status NOT IN (1, 5)
