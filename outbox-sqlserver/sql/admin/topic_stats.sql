-- What is live per topic: entries per topic and status, every status but delivered, each
-- status read through the filtered index that holds it alone, with the oldest creation
-- time of each group. Reads only.
SET NOCOUNT ON;
SELECT live.topic, CAST(live.status AS int) AS status, COUNT_BIG(*) AS n,
       MIN(live.created_at) AS oldest
FROM (SELECT topic, status, created_at FROM {table} WITH (INDEX([{name}_pending_ix]))
      WHERE status = 0
      UNION ALL
      SELECT topic, status, created_at FROM {table} WITH (INDEX([{name}_parked_ix]))
      WHERE status IN (2, 3, 4, 5)) AS live
GROUP BY live.topic, live.status;
