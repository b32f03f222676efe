-- Loads ? pending entries of ? payload bytes, due an hour ago, in strictly increasing
-- created order (one microsecond apart, after ? earlier rows), with time-ordered ids
-- (UUID version 7 layout, from the created time) as the library writes them, and each
-- row's slice hash (FNV-1a of the id, as the store writes it: the loader generates that
-- expression in place of the slice hash marker). Rows come from MariaDB's SEQUENCE
-- engine; payloads are repeated MD5 digests, so they do not compress away.
INSERT INTO {table} (id, topic, payload, headers, status, created_at, updated_at, stamp,
                     slice_hash)
SELECT r.id, 'bench', r.payload, '{}', 0, r.at, r.at, r.stamp, {slice_hash}
FROM (
    SELECT UNHEX(CONCAT(LPAD(HEX(c.us DIV 1000), 12, '0'), '7',
                        LPAD(HEX(c.us MOD 1000), 3, '0'), '8', LEFT(MD5(RAND()), 15))) AS id,
           LEFT(REPEAT(UNHEX(MD5(c.seq)), (c.bytes + 15) DIV 16), c.bytes) AS payload,
           c.at, UNHEX(MD5(RAND())) AS stamp
    FROM (
        SELECT s.seq, p.bytes,
               p.base_us + p.ahead + s.seq AS us,
               p.base + INTERVAL (p.ahead + s.seq) MICROSECOND AS at
        FROM (SELECT CAST(? AS UNSIGNED) AS n, CAST(? AS UNSIGNED) AS bytes,
                     CAST(? AS UNSIGNED) AS ahead,
                     UTC_TIMESTAMP(6) - INTERVAL 1 HOUR AS base,
                     FLOOR(UNIX_TIMESTAMP(NOW(6)) * 1000000) - 3600000000 AS base_us) AS p
        JOIN seq_1_to_100000000 AS s ON s.seq <= p.n
    ) AS c
) AS r
