-- Claim step 2 of 2 per row: lease the row only if it is still exactly the version the
-- re-read judged eligible. Claims leave updated_at alone so retry order stays stable.
UPDATE {table}
SET claim_owner = ?,
    claim_token = ?,
    claimed_at = ?,
    claim_expires_at = ?,
    claim_attempt_count = ?,
    stamp = ?
WHERE id = ? AND stamp = ?
