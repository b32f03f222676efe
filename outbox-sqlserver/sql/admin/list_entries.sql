-- One page of entries in one live status ({status}), in creation order. The status and
-- its filtered index's group ({status_group}) are written in, so the filtered index that
-- holds the status matches; the statement is compiled for the cursor's values, so the
-- seek starts at the cursor. @P1 topic (NULL: every topic), @P2 the last id of the
-- previous page (NULL: the first page), @P3 page size, @P4 partition key (NULL:
-- any). An id that is not in the table
-- gives an empty page.
SET NOCOUNT ON;
DECLARE @after_created datetime2(6) = (SELECT c.created_at FROM {table} AS c WHERE c.id = @P2);
DECLARE @from_created datetime2(6) = COALESCE(@after_created, '0001-01-01');
DECLARE @from_id binary(16) = COALESCE(@P2, 0x00000000000000000000000000000000);
SELECT TOP (@P3) t.*
FROM {table} AS t
WHERE t.status = {status}
  AND t.status IN ({status_group})
  AND (@P1 IS NULL OR t.topic = @P1)
  AND (@P4 IS NULL OR t.partition_key = @P4)
  AND (@P2 IS NULL OR @after_created IS NOT NULL)
  AND t.created_at >= @from_created
  AND (t.created_at > @from_created OR t.id > @from_id)
ORDER BY t.created_at, t.id
OPTION (RECOMPILE);
