-- Extends a lease the claim still holds. Status codes: 1 delivered, 5 dead-lettered.
UPDATE {table}
SET claim_expires_at = ?,
    stamp = ?
WHERE id = ? AND claim_owner = ? AND claim_token = ?
  AND status NOT IN (1, 5)
