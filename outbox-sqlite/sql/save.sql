-- The selection-only save: writes the outcome fields if the stamp is still the durable
-- one and the row is not terminal; clears any claim. Returns the written row, or nothing.
-- ?1..?7 outcome fields, ?8 updated_at, ?9 new stamp, ?10 id, ?11 expected stamp.
UPDATE {table}
SET status = ?1,
    next_retry_at = ?2,
    attempt_count = ?3,
    last_error = ?4,
    dead_letter_reason = ?5,
    delivered_at = ?6,
    provider_message_id = ?7,
    updated_at = ?8,
    stamp = ?9,
    claim_owner = NULL,
    claim_token = NULL,
    claimed_at = NULL,
    claim_expires_at = NULL
WHERE id = ?10 AND stamp = ?11 AND status NOT IN (1, 5)
RETURNING *
