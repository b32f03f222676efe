-- Loads $1 pending entries of $2 payload bytes, due an hour ago, in strictly increasing
-- created order (one microsecond apart, after $3 earlier rows), as a burst of enqueues
-- leaves them. Payloads are hex digests, so they do not compress away.
INSERT INTO {table} (id, topic, payload, headers, status, created_at, updated_at, stamp)
SELECT gen_random_uuid(), 'bench',
       decode(repeat(md5(i::text), ($2::int + 15) / 16), 'hex'),
       '{}'::jsonb, 0,
       now() - interval '1 hour' + ($3::bigint + i) * interval '1 microsecond',
       now() - interval '1 hour' + ($3::bigint + i) * interval '1 microsecond',
       gen_random_uuid()
FROM generate_series(1, $1::bigint) AS i
