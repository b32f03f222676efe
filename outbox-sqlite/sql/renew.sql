-- Extends a lease the claim still holds. ?1 new expiry, ?2 new stamp, ?3 id, ?4 owner, ?5 token.
UPDATE {table}
SET claim_expires_at = ?1, stamp = ?2
WHERE id = ?3 AND claim_owner = ?4 AND claim_token = ?5 AND status NOT IN (1, 5)
RETURNING *
