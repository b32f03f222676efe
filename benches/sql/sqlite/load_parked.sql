-- Loads ?1 retryable failures of ?2 random payload bytes whose next retry is an hour ahead,
-- with time-ordered ids (UUID version 7 layout).
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
INSERT INTO {table} (id, topic, payload, headers, status, created_at, updated_at,
                     next_retry_at, attempt_count, last_error, stamp)
SELECT unhex(printf('%012x', ((unixepoch() - 7200) * 1000000 + i) / 1000) || '7' || printf('%03x', ((unixepoch() - 7200) * 1000000 + i) % 1000) || '8'
             || substr(hex(randomblob(8)), 2)),
       'bench', randomblob(?2), '{}', 4,
       (unixepoch() - 7200) * 1000000,
       (unixepoch() - 7200) * 1000000,
       (unixepoch() + 3600) * 1000000 + i,
       1, 'parked by the bench', randomblob(16)
FROM n
