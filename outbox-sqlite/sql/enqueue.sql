-- New entries in one statement. ?1 is a JSON array with one object per entry: `id` and
-- `stamp` (hex), `topic`, `partition_key`, `payload` (hex), `headers` (a JSON object, as
-- text), `created_at` (µs, also the first `updated_at`), `not_before` (µs or null) and
-- `slice_hash` (outbox_core::slice_hash).
--
-- The objects are copied out of the array once, into `batch`: read from json_each
-- directly, each of the nine fields would render its object to text again.
WITH batch AS MATERIALIZED (SELECT value AS v FROM json_each(?1))
INSERT INTO {table} (id, topic, partition_key, payload, headers, status, created_at, updated_at,
                     not_before, attempt_count, claim_attempt_count, stamp, slice_hash)
SELECT unhex(v ->> 'id'),
       v ->> 'topic',
       v ->> 'partition_key',
       unhex(v ->> 'payload'),
       v ->> 'headers',
       0,
       v ->> 'created_at',
       v ->> 'created_at',
       v ->> 'not_before',
       0,
       0,
       unhex(v ->> 'stamp'),
       v ->> 'slice_hash'
FROM batch
