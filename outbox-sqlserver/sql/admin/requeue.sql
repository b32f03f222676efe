-- Makes entries of one status (3 failed or 5 dead-lettered) pending again with a fresh
-- attempt budget; the last error is kept. @P1 time (NULL: the server's clock), @P2 one id
-- (NULL: all), @P3 the status, @P4 one topic (NULL: every topic). Rows a worker holds
-- locked are skipped, not waited for.
SET NOCOUNT ON;
-- Should it ever deadlock with a worker, the background statement is the one to go.
SET DEADLOCK_PRIORITY LOW;
DECLARE @now datetime2(6) = COALESCE(@P1, SYSUTCDATETIME());
UPDATE t
SET status = 0,
    attempt_count = 0,
    next_retry_at = NULL,
    retry_due_at = @now,
    dead_letter_reason = NULL,
    claim_owner = NULL,
    claim_token = NULL,
    claimed_at = NULL,
    claim_expires_at = NULL,
    updated_at = @now,
    stamp = NEWID()
FROM {table} AS t WITH (ROWLOCK, READPAST)
WHERE t.status = @P3
  AND (@P2 IS NULL OR t.id = @P2)
  AND (@P4 IS NULL OR t.topic = @P4);
SELECT @@ROWCOUNT AS requeued;
