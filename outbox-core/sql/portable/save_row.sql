-- A selection-only save: only over the version the caller read (stamp), never over a
-- terminal row. Status codes: 1 delivered, 5 dead-lettered (see EmissionStatus::code).
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
WHERE id = ? AND stamp = ?
  AND status NOT IN (1, 5)
