-- New entries in one statement. ?1 is a JSON array with one object per entry: `id` and
-- `stamp` (hex), `topic`, `partition_key`, `payload` (hex), `headers` (a JSON object, as
-- text), `created_at` (µs, also the first `updated_at`), `not_before` (µs or null) and
-- `slice_hash` (outbox_core::slice_hash).
INSERT INTO {table} (id, topic, partition_key, payload, headers, status, created_at, updated_at,
                     not_before, attempt_count, claim_attempt_count, stamp, slice_hash)
SELECT unhex(value ->> 'id'),
       value ->> 'topic',
       value ->> 'partition_key',
       unhex(value ->> 'payload'),
       value ->> 'headers',
       0,
       value ->> 'created_at',
       value ->> 'created_at',
       value ->> 'not_before',
       0,
       0,
       unhex(value ->> 'stamp'),
       value ->> 'slice_hash'
FROM json_each(?1)
