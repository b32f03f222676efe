-- Writes the outcome fields of one row if its stamp is still the one the caller read and
-- it is not terminal, clearing its claim. Parameters: status, next_retry_at,
-- attempt_count, last_error, dead_letter_reason, delivered_at, provider_message_id,
-- updated_at, the new stamp; then the id and the stamp read.
UPDATE {table}
SET status = ?,
    next_retry_at = ?,
    attempt_count = ?,
    last_error = ?,
    dead_letter_reason = ?,
    delivered_at = ?,
    provider_message_id = ?,
    updated_at = ?,
    stamp = ?,
    claim_owner = NULL,
    claim_token = NULL,
    claimed_at = NULL,
    claim_expires_at = NULL
WHERE id = ? AND stamp = ? AND status NOT IN (1, 5)
