-- Loads ? retryable failures of ? payload bytes whose next retry is an hour ahead, with
-- time-ordered ids (UUID version 7 layout) and each row's slice hash (as in
-- load_pending.sql).
INSERT INTO {table} (id, topic, payload, headers, status, created_at, updated_at,
                     next_retry_at, attempt_count, last_error, stamp, slice_hash)
SELECT r.id, 'bench', r.payload, '{}', 4, r.base, r.base, r.retry, 1,
       'parked by the bench', r.stamp, {slice_hash}
FROM (
    SELECT UNHEX(CONCAT(LPAD(HEX(c.us DIV 1000), 12, '0'), '7',
                        LPAD(HEX(c.us MOD 1000), 3, '0'), '8', LEFT(MD5(RAND()), 15))) AS id,
           LEFT(REPEAT(UNHEX(MD5(c.seq)), (c.bytes + 15) DIV 16), c.bytes) AS payload,
           c.base, c.retry, UNHEX(MD5(RAND())) AS stamp
    FROM (
        SELECT s.seq, p.bytes, p.base,
               p.base_us + s.seq AS us,
               p.ahead + INTERVAL s.seq MICROSECOND AS retry
        FROM (SELECT CAST(? AS UNSIGNED) AS n, CAST(? AS UNSIGNED) AS bytes,
                     UTC_TIMESTAMP(6) - INTERVAL 2 HOUR AS base,
                     UTC_TIMESTAMP(6) + INTERVAL 1 HOUR AS ahead,
                     FLOOR(UNIX_TIMESTAMP(NOW(6)) * 1000000) - 7200000000 AS base_us) AS p
        JOIN seq_1_to_100000000 AS s ON s.seq <= p.n
    ) AS c
) AS r
