-- One new pending row, with its slice hash (outbox_core::slice_hash). Status code 0 is
-- pending (see EmissionStatus::code).
INSERT INTO {table} (
    id, topic, partition_key, payload, headers, status, created_at, updated_at,
    not_before, attempt_count, claim_attempt_count, stamp, slice_hash
) VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?, 0, 0, ?, ?)
