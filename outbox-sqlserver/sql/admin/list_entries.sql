-- One page of entries in one status, in creation order. @P1 status, @P2 topic (NULL:
-- every topic), @P3 the last id of the previous page (NULL: the first page), @P4 page size.
SET NOCOUNT ON;
DECLARE @after_created datetime2(6) = (SELECT c.created_at FROM {table} AS c WHERE c.id = @P3);
SELECT TOP (@P4) t.*
FROM {table} AS t
WHERE t.status = @P1
  AND (@P2 IS NULL OR t.topic = @P2)
  AND (@P3 IS NULL
       OR t.created_at > @after_created
       OR (t.created_at = @after_created AND t.id > @P3))
ORDER BY t.created_at, t.id;
