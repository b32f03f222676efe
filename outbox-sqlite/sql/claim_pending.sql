-- Leases up to ?5 claimable pending rows in pending order. The subquery walks the
-- pending partial index; the outer WHERE re-checks eligibility in the same statement.
-- ?1 owner, ?2 now (µs), ?3 lease expiry (µs), ?4 topic or NULL, ?5 batch size.
UPDATE {table}
SET claim_owner = ?1,
    claim_token = randomblob(16),
    claimed_at = ?2,
    claim_expires_at = ?3,
    claim_attempt_count = claim_attempt_count + 1,
    stamp = randomblob(16)
WHERE id IN (
        SELECT id FROM {table}
        WHERE status = 0
          AND (not_before IS NULL OR not_before <= ?2)
          AND (claim_expires_at IS NULL OR claim_expires_at <= ?2)
          AND (?4 IS NULL OR topic = ?4)
        ORDER BY created_at, id
        LIMIT ?5)
  AND status = 0
  AND (claim_expires_at IS NULL OR claim_expires_at <= ?2)
RETURNING *
