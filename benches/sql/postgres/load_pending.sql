-- Loads $1 pending entries of $2 payload bytes, due an hour ago, in strictly increasing
-- created order (one microsecond apart, after $3 earlier rows), as a burst of enqueues
-- leaves them, with time-ordered ids (UUID version 7 layout, from the created time) as the
-- library writes them. Payloads are hex digests, so they do not compress away.
INSERT INTO {table} (id, topic, payload, headers, status, created_at, updated_at, stamp)
SELECT (lpad(to_hex(c / 1000), 12, '0') || '7' || lpad(to_hex(c % 1000), 3, '0') || '8'
        || substr(md5(random()::text), 1, 15))::uuid,
       'bench',
       decode(repeat(md5(i::text), ($2::int + 15) / 16), 'hex'),
       '{}'::jsonb, 0,
       now() - interval '1 hour' + ($3::bigint + i) * interval '1 microsecond',
       now() - interval '1 hour' + ($3::bigint + i) * interval '1 microsecond',
       gen_random_uuid()
FROM (SELECT i, (extract(epoch FROM now()) * 1000000)::bigint - 3600000000 + $3::bigint + i AS c
      FROM generate_series(1, $1::bigint) AS i) AS s
