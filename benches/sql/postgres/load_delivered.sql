-- Loads $1 delivered entries of $2 payload bytes: history a drain has already cleared,
-- with time-ordered ids (UUID version 7 layout, from the created time).
INSERT INTO {table} (id, topic, payload, headers, status, created_at, updated_at,
                     delivered_at, attempt_count, stamp)
SELECT (lpad(to_hex(c / 1000), 12, '0') || '7' || lpad(to_hex(c % 1000), 3, '0') || '8'
        || substr(md5(random()::text), 1, 15))::uuid,
       'bench',
       decode(repeat(md5(i::text), ($2::int + 15) / 16), 'hex'),
       '{}'::jsonb, 1,
       now() - interval '2 hours' + i * interval '1 microsecond',
       now() - interval '2 hours' + i * interval '1 microsecond',
       now() - interval '2 hours' + i * interval '1 microsecond',
       1, gen_random_uuid()
FROM (SELECT i, (extract(epoch FROM now()) * 1000000)::bigint - 7200000000 + i AS c
      FROM generate_series(1, $1::bigint) AS i) AS s
