-- Loads ? pending entries of ? payload bytes spread round robin over ? partition keys
-- (`key-0` …), due an hour ago, one microsecond apart, with time-ordered ids as the
-- library writes them, each with its key's slice hash (FNV-1a of the key):
-- the backlog of an ordered drain.
INSERT INTO {table} (id, topic, partition_key, payload, headers, status, created_at,
                     updated_at, stamp, slice_hash)
SELECT r.id, 'bench', r.k, r.payload, '{}', 0, r.at, r.at, r.stamp, {slice_hash}
FROM (
    SELECT UNHEX(CONCAT(LPAD(HEX(c.us DIV 1000), 12, '0'), '7',
                        LPAD(HEX(c.us MOD 1000), 3, '0'), '8', LEFT(MD5(RAND()), 15))) AS id,
           CONCAT('key-', c.seq MOD c.key_count) AS k,
           LEFT(REPEAT(UNHEX(MD5(c.seq)), (c.bytes + 15) DIV 16), c.bytes) AS payload,
           c.at, UNHEX(MD5(RAND())) AS stamp
    FROM (
        SELECT s.seq, p.bytes, p.key_count,
               p.base_us + s.seq AS us,
               p.base + INTERVAL s.seq MICROSECOND AS at
        FROM (SELECT CAST(? AS UNSIGNED) AS n, CAST(? AS UNSIGNED) AS bytes,
                     CAST(? AS UNSIGNED) AS key_count,
                     UTC_TIMESTAMP(6) - INTERVAL 1 HOUR AS base,
                     FLOOR(UNIX_TIMESTAMP(NOW(6)) * 1000000) - 3600000000 AS base_us) AS p
        JOIN seq_1_to_100000000 AS s ON s.seq <= p.n
    ) AS c
) AS r
