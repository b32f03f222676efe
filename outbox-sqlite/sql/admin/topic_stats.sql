-- What is live per topic: entries per topic and status, every status but delivered, each
-- status read through the partial index that holds it alone (each WHERE repeats its
-- index's condition word for word), with the oldest creation time (µs) of each group.
SELECT live.topic, live.status, count(*) AS n, min(live.created_at) AS oldest
FROM (SELECT t.topic, t.status, t.created_at FROM {table} AS t WHERE t.status = 0
      UNION ALL
      SELECT t.topic, t.status, t.created_at FROM {table} AS t WHERE t.status >= 2
     ) AS live
GROUP BY live.topic, live.status
