-- One page of delivered entries, from the most recent delivery back, through the filtered
-- index retention walks (its rows end with the clustered seq, which orders entries
-- delivered at the same instant); compiled for the cursor's values, so the seek starts at
-- the cursor. @P1 topic (NULL: every topic), @P2 the last id of the previous page (NULL:
-- the first page), @P3 page size, @P4 partition key (NULL:
-- any). An id that is not a delivered entry gives an empty page.
SET NOCOUNT ON;
DECLARE @after_delivered datetime2(6);
DECLARE @after_seq bigint;
SELECT @after_delivered = c.delivered_at, @after_seq = c.seq
FROM {table} AS c
WHERE c.id = @P2 AND c.status = 1;
DECLARE @from_delivered datetime2(6) = COALESCE(@after_delivered, '9999-12-31T23:59:59.999999');
DECLARE @from_seq bigint = COALESCE(@after_seq, 9223372036854775807);
SELECT TOP (@P3) t.*
FROM {table} AS t
WHERE t.status = 1
  AND (@P1 IS NULL OR t.topic = @P1)
  AND (@P4 IS NULL OR t.partition_key = @P4)
  AND (@P2 IS NULL OR @after_delivered IS NOT NULL)
  AND t.delivered_at <= @from_delivered
  AND (t.delivered_at < @from_delivered OR t.seq < @from_seq)
ORDER BY t.delivered_at DESC, t.seq DESC
OPTION (RECOMPILE);
