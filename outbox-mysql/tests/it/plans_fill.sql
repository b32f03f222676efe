-- Rows numbered from a first number onwards, every one of one status, created a
-- microsecond after the one before (delivered ones delivered a hundred at each
-- microsecond, as a batch's completions share their time); a cross join of digits counts
-- them. Parameters:
-- the first number (three times), the number of partition keys (twice; 0: no keys, else
-- the rows round robin over keys k0, k1, ...), the status, how many.
INSERT INTO outbox (id, topic, payload, headers, status, created_at, updated_at,
                    delivered_at, stamp, slice_hash, partition_key)
SELECT UNHEX(MD5(CONCAT('id', n.i + ?))), 't', 'x', '{}', s.status,
       TIMESTAMP('2026-01-01') + INTERVAL (n.i + ?) MICROSECOND,
       TIMESTAMP('2026-01-01'),
       CASE WHEN s.status = 1 THEN TIMESTAMP('2026-01-01') + INTERVAL (n.i DIV 100) MICROSECOND END,
       UNHEX(MD5(CONCAT('stamp', n.i + ?))), n.i,
       CASE WHEN ? > 0 THEN CONCAT('k', n.i % ?) END
FROM (SELECT ? AS status) AS s
JOIN (SELECT a.d + 10 * b.d + 100 * c.d + 1000 * d.d + 10000 * e.d + 100000 * f.d AS i
      FROM (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4
            UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) AS a
      CROSS JOIN (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4
            UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) AS b
      CROSS JOIN (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4
            UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) AS c
      CROSS JOIN (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4
            UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) AS d
      CROSS JOIN (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4
            UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) AS e
      CROSS JOIN (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4
            UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) AS f) AS n
  ON n.i < ?
