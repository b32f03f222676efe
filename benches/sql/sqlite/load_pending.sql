-- Loads ?1 pending entries of ?2 random payload bytes, due an hour ago, in strictly
-- increasing created order (one microsecond apart, after ?3 earlier rows), with
-- time-ordered ids (UUID version 7 layout, from the created time) as the library writes.
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
INSERT INTO {table} (id, topic, payload, headers, status, created_at, updated_at, stamp)
SELECT unhex(printf('%012x', ((unixepoch() - 3600) * 1000000 + ?3 + i) / 1000) || '7' || printf('%03x', ((unixepoch() - 3600) * 1000000 + ?3 + i) % 1000) || '8'
             || substr(hex(randomblob(8)), 2)),
       'bench', randomblob(?2), '{}', 0,
       (unixepoch() - 3600) * 1000000 + ?3 + i,
       (unixepoch() - 3600) * 1000000 + ?3 + i,
       randomblob(16)
FROM n
