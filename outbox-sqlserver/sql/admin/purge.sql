-- Deletes up to @P2 entries in status @P3 (3 failed or 5 dead-lettered): one id (@P1), or
-- any when @P1 is NULL; of topic @P4, or any when @P4 is NULL. Rows a worker holds are
-- skipped, not waited for.
SET NOCOUNT ON;
-- Should it ever deadlock with a worker, the background statement is the one to go.
SET DEADLOCK_PRIORITY LOW;
DELETE TOP (@P2)
FROM {table} WITH (ROWLOCK, READPAST)
WHERE status = @P3
  AND (@P1 IS NULL OR id = @P1)
  AND (@P4 IS NULL OR topic = @P4);
SELECT @@ROWCOUNT AS deleted;
