-- Loads ?1 pending entries of ?2 random payload bytes, due an hour ago, in strictly
-- increasing created order (one microsecond apart, after ?3 earlier rows).
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
INSERT INTO {table} (id, topic, payload, headers, status, created_at, updated_at, stamp)
SELECT randomblob(16), 'bench', randomblob(?2), '{}', 0,
       (unixepoch() - 3600) * 1000000 + ?3 + i,
       (unixepoch() - 3600) * 1000000 + ?3 + i,
       randomblob(16)
FROM n
