-- Loads $1 delivered entries of $2 payload bytes: history a drain has already cleared.
INSERT INTO {table} (id, topic, payload, headers, status, created_at, updated_at,
                     delivered_at, attempt_count, stamp)
SELECT gen_random_uuid(), 'bench',
       decode(repeat(md5(i::text), ($2::int + 15) / 16), 'hex'),
       '{}'::jsonb, 1,
       now() - interval '2 hours' + i * interval '1 microsecond',
       now() - interval '2 hours' + i * interval '1 microsecond',
       now() - interval '2 hours' + i * interval '1 microsecond',
       1, gen_random_uuid()
FROM generate_series(1, $1::bigint) AS i
