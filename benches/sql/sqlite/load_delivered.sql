-- Loads ?1 delivered entries of ?2 random payload bytes: history a drain has cleared,
-- with time-ordered ids (UUID version 7 layout, from the created time).
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
INSERT INTO {table} (id, topic, payload, headers, status, created_at, updated_at,
                     delivered_at, attempt_count, stamp)
SELECT unhex(printf('%012x', ((unixepoch() - 7200) * 1000000 + i) / 1000) || '7' || printf('%03x', ((unixepoch() - 7200) * 1000000 + i) % 1000) || '8'
             || substr(hex(randomblob(8)), 2)),
       'bench', randomblob(?2), '{}', 1,
       (unixepoch() - 7200) * 1000000 + i,
       (unixepoch() - 7200) * 1000000 + i,
       (unixepoch() - 7200) * 1000000 + i,
       1, randomblob(16)
FROM n
