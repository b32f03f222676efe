-- One page of delivered entries, from the most recent delivery back, through the index
-- retention walks (its entries end with the clustered seq, which orders entries delivered
-- at the same instant). The cursor's place is read first, as in list_entries.sql.
-- Parameters: the last id of the previous page or NULL (twice), the topic or NULL
-- (twice), the partition key or NULL (twice), the page size. An id that is not a
-- delivered entry gives an empty page.
SELECT t.*
FROM (SELECT COALESCE(MAX(c.delivered_at), CAST('9999-12-31 23:59:59.999999' AS DATETIME(6)))
                 AS delivered_at,
             COALESCE(MAX(c.seq), 9223372036854775807) AS seq,
             COUNT(*) AS found
      FROM {table} AS c WHERE c.id = ? AND c.status = 1) AS cursor_at
JOIN {table} AS t
WHERE t.status = 1
  AND (? IS NULL OR cursor_at.found = 1)
  AND (? IS NULL OR t.topic = ?)
  AND (? IS NULL OR t.partition_key = ?)
  AND t.delivered_at <= cursor_at.delivered_at
  AND (t.delivered_at < cursor_at.delivered_at OR t.seq < cursor_at.seq)
ORDER BY t.delivered_at DESC, t.seq DESC
LIMIT ?
