-- The retry-ready rows due at @P1 (NULL: the server's clock), leased or not, in retry
-- order; @P2 topic filter (NULL: every topic), @P3 limit, @P4 slice count (NULL: every
-- slice) and @P5 slice index. Reads only.
SET NOCOUNT ON;
DECLARE @now datetime2(6) = COALESCE(@P1, SYSUTCDATETIME());
SELECT TOP (@P3) t.*
FROM {table} AS t
WHERE t.status IN (2, 4)
  AND (t.next_retry_at IS NULL OR t.next_retry_at <= @now)
  AND (@P2 IS NULL OR (t.topic = @P2 AND DATALENGTH(t.topic) = DATALENGTH(@P2)))
  AND (@P4 IS NULL
       OR COALESCE(t.slice_hash, {schema_prefix}[{name}_slice_hash](t.partition_key, t.id))
          % @P4 = @P5)
ORDER BY t.retry_due_at, t.id;
