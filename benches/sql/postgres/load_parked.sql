-- Loads $1 retryable failures of $2 payload bytes whose next retry is an hour ahead:
-- parked work no claim may take yet. Ids are time-ordered (UUID version 7 layout).
INSERT INTO {table} (id, topic, payload, headers, status, created_at, updated_at,
                     next_retry_at, attempt_count, last_error, stamp)
SELECT (lpad(to_hex(c / 1000), 12, '0') || '7' || lpad(to_hex(c % 1000), 3, '0') || '8'
        || substr(md5(random()::text), 1, 15))::uuid,
       'bench',
       decode(repeat(md5(i::text), ($2::int + 15) / 16), 'hex'),
       '{}'::jsonb, 4,
       now() - interval '2 hours',
       now() - interval '2 hours',
       now() + interval '1 hour' + i * interval '1 microsecond',
       1, 'parked by the bench', gen_random_uuid()
FROM (SELECT i, (extract(epoch FROM now()) * 1000000)::bigint - 7200000000 + i AS c
      FROM generate_series(1, $1::bigint) AS i) AS s
