-- Deletes up to @P2 delivered rows delivered before @P1, skipping rows another
-- transaction holds, so pruning never waits on (or blocks) a worker. The batch stays
-- below the lock-escalation threshold (5,000 locks), so a prune never locks the table.
SET NOCOUNT ON;
-- Should it ever deadlock with a worker, the background statement is the one to go.
SET DEADLOCK_PRIORITY LOW;
DELETE TOP (@P2)
FROM {table} WITH (ROWLOCK, READPAST)
WHERE status = 1
  AND delivered_at < @P1;
SELECT @@ROWCOUNT AS deleted;
