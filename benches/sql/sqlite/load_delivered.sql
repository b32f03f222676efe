-- Loads ?1 delivered entries of ?2 random payload bytes: history a drain has cleared.
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
INSERT INTO {table} (id, topic, payload, headers, status, created_at, updated_at,
                     delivered_at, attempt_count, stamp)
SELECT randomblob(16), 'bench', randomblob(?2), '{}', 1,
       (unixepoch() - 7200) * 1000000 + i,
       (unixepoch() - 7200) * 1000000 + i,
       (unixepoch() - 7200) * 1000000 + i,
       1, randomblob(16)
FROM n
