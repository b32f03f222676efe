-- What is live per topic: entries per topic and status, every status but delivered, read
-- as ranges of the claim index (status, created_at, id) without the delivered range
-- between them, with the oldest creation time of each group.
SELECT t.topic, CAST(t.status AS SIGNED) AS status, CAST(COUNT(*) AS SIGNED) AS n,
       MIN(t.created_at) AS oldest
FROM {table} AS t FORCE INDEX ({name}_pending)
WHERE t.status IN (0, 2, 3, 4, 5)
GROUP BY t.topic, t.status
