-- Loads ? delivered entries of ? payload bytes: history a drain has cleared, created two
-- hours ago one microsecond apart, with time-ordered ids (UUID version 7 layout) and each
-- row's slice hash (as in load_pending.sql).
INSERT INTO {table} (id, topic, payload, headers, status, created_at, updated_at,
                     delivered_at, attempt_count, stamp, slice_hash)
SELECT r.id, 'bench', r.payload, '{}', 1, r.at, r.at, r.at, 1, r.stamp, {slice_hash}
FROM (
    SELECT UNHEX(CONCAT(LPAD(HEX(c.us DIV 1000), 12, '0'), '7',
                        LPAD(HEX(c.us MOD 1000), 3, '0'), '8', LEFT(MD5(RAND()), 15))) AS id,
           LEFT(REPEAT(UNHEX(MD5(c.seq)), (c.bytes + 15) DIV 16), c.bytes) AS payload,
           c.at, UNHEX(MD5(RAND())) AS stamp
    FROM (
        SELECT s.seq, p.bytes,
               p.base_us + s.seq AS us,
               p.base + INTERVAL s.seq MICROSECOND AS at
        FROM (SELECT CAST(? AS UNSIGNED) AS n, CAST(? AS UNSIGNED) AS bytes,
                     UTC_TIMESTAMP(6) - INTERVAL 2 HOUR AS base,
                     FLOOR(UNIX_TIMESTAMP(NOW(6)) * 1000000) - 7200000000 AS base_us) AS p
        JOIN seq_1_to_100000000 AS s ON s.seq <= p.n
    ) AS c
) AS r
