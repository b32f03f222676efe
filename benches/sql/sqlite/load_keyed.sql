-- Loads ?1 pending entries of ?2 random payload bytes spread round robin over ?3 partition
-- keys (`key-0` …), due an hour ago, one microsecond apart, with time-ordered ids as the
-- library writes them: the backlog of an ordered drain. The store's triggers mark each
-- key's head as the rows go in.
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
INSERT INTO {table} (id, topic, partition_key, payload, headers, status, created_at, updated_at, stamp)
SELECT unhex(printf('%012x', ((unixepoch() - 3600) * 1000000 + i) / 1000) || '7' || printf('%03x', ((unixepoch() - 3600) * 1000000 + i) % 1000) || '8'
             || substr(hex(randomblob(8)), 2)),
       'bench', 'key-' || (i % ?3), randomblob(?2), '{}', 0,
       (unixepoch() - 3600) * 1000000 + i,
       (unixepoch() - 3600) * 1000000 + i,
       randomblob(16)
FROM n
