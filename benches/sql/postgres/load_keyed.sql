-- Loads $1 pending entries of $2 payload bytes spread round robin over $3 partition keys
-- (`key-0` …), due an hour ago, one microsecond apart, with time-ordered ids as the
-- library writes them: the backlog of an ordered drain.
INSERT INTO {table} (id, topic, partition_key, payload, headers, status, created_at, updated_at, stamp)
SELECT (lpad(to_hex(c / 1000), 12, '0') || '7' || lpad(to_hex(c % 1000), 3, '0') || '8'
        || substr(md5(random()::text), 1, 15))::uuid,
       'bench',
       'key-' || (i % $3::bigint),
       decode(repeat(md5(i::text), ($2::int + 15) / 16), 'hex'),
       '{}'::jsonb, 0,
       now() - interval '1 hour' + i * interval '1 microsecond',
       now() - interval '1 hour' + i * interval '1 microsecond',
       gen_random_uuid()
FROM (SELECT i, (extract(epoch FROM now()) * 1000000)::bigint - 3600000000 + i AS c
      FROM generate_series(1, $1::bigint) AS i) AS s
