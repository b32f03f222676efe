-- One new entry (a single entry skips the JSON form of enqueue.sql). ?1 id, ?2 topic,
-- ?3 partition key, ?4 payload, ?5 headers (JSON), ?6 created_at = updated_at (µs),
-- ?7 not_before (µs), ?8 stamp, ?9 slice hash (outbox_core::slice_hash).
INSERT INTO {table} (id, topic, partition_key, payload, headers, status, created_at, updated_at,
                     not_before, attempt_count, claim_attempt_count, stamp, slice_hash)
VALUES (?1, ?2, ?3, ?4, ?5, 0, ?6, ?6, ?7, 0, 0, ?8, ?9)
