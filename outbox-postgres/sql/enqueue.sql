-- Writes a batch of new pending entries and raises one wake-up, in one statement.
-- Parameter arrays, one element per entry: $1 id, $2 topic, $3 partition_key,
-- $4 payload, $5 headers, $6 created_at (NULL: database clock), $7 not_before, $9 slice
-- hash (outbox_core::slice_hash); $8 is the wake-up channel. The notification is transactional: listeners hear it only when the
-- enclosing transaction commits. A duplicate id fails the whole statement.
--
-- The database clock is read when the row is written (clock_timestamp()), not when the
-- transaction began (now()): a key's order is its entries' creation order, and writers of
-- one key are serialized from their first write of it (the trigger of definitions/keep_heads.sql), so
-- creation order is then the order in which they wrote, and committed.
WITH inserted AS (
    INSERT INTO {table} (id, topic, partition_key, payload, headers, status, created_at,
                         updated_at, not_before, stamp, slice_hash)
    SELECT i.id, i.topic, i.partition_key, i.payload, i.headers, 0,
           c.at, c.at, i.not_before, gen_random_uuid(), i.slice_hash
    FROM unnest($1::uuid[], $2::text[], $3::text[], $4::bytea[], $5::jsonb[],
                $6::timestamptz[], $7::timestamptz[], $9::bigint[])
        AS i(id, topic, partition_key, payload, headers, created_at, not_before, slice_hash)
    CROSS JOIN LATERAL (SELECT COALESCE(i.created_at, clock_timestamp()) AS at) AS c
    RETURNING *
),
woken AS MATERIALIZED (
    SELECT pg_notify($8::text, '')
)
SELECT inserted.* FROM inserted CROSS JOIN woken
