-- Claims up to @P3 entries in one batch and one round trip: retry-ready rows first (in
-- retry order: they have waited longest), then pending rows (in pending order).
-- @P1 now (NULL: the server's clock), @P2 topic (NULL: every topic), @P3 batch size,
-- @P4 owner, @P5 and @P6 the lease in whole seconds and the remaining microseconds,
-- @P7 take retry-ready rows, @P8 take pending rows (bits).
--
-- Each group is an ordered TOP (n) CTE read WITH (UPDLOCK, READPAST, ROWLOCK,
-- READCOMMITTEDLOCK) and updated through the CTE: rows another transaction holds are
-- skipped rather than waited for, each row taken is update-locked as it is read (so two
-- workers can never take the same row), and READCOMMITTEDLOCK keeps the read a locking
-- read even where the database serves READ COMMITTED from row versions (RCSI), which
-- would otherwise let two workers read the same committed row. Eligibility is judged on
-- the locked row. Every row gets its own NEWID() token and a new stamp.
--
-- Each read names the filtered index it walks (INDEX(...)), so the plan is an ordered walk
-- of the claimable rows that stops after the batch, whatever the statistics say: a
-- queue's statistics are stale by nature, and a scan-then-sort plan would update-lock
-- every row it read before sorting.
--
-- The claimed ids go OUTPUT ... INTO a table variable and the rows are read back at the
-- end: two updates feed one result set, and OUTPUT without INTO is refused on a table
-- that has triggers (audit or CDC triggers a DBA may add later). Both updates run in one
-- transaction, so a failure leaves nothing claimed. Rows come back in no particular
-- order; the store sorts them into claim order.
SET NOCOUNT ON;
SET XACT_ABORT ON;
DECLARE @now datetime2(6) = COALESCE(@P1, SYSUTCDATETIME());
DECLARE @expires datetime2(6) = DATEADD(microsecond, @P6, DATEADD(second, @P5, @now));
DECLARE @claimed TABLE (id binary(16) NOT NULL PRIMARY KEY);
DECLARE @room int = @P3;

BEGIN TRANSACTION;

WITH c AS (
    SELECT TOP (@room) t.*
    FROM {table} AS t WITH (UPDLOCK, READPAST, ROWLOCK, READCOMMITTEDLOCK, INDEX([{name}_retry_ix]))
    WHERE @P7 = 1
      AND t.status IN (2, 4)
      AND t.retry_due_at <= @now
      AND (t.next_retry_at IS NULL OR t.next_retry_at <= @now)
      AND (t.claim_expires_at IS NULL OR t.claim_expires_at <= @now)
      AND (@P2 IS NULL OR (t.topic = @P2 AND DATALENGTH(t.topic) = DATALENGTH(@P2)))
    ORDER BY t.retry_due_at, t.id
)
UPDATE c
SET claim_owner = @P4,
    claim_token = NEWID(),
    claimed_at = @now,
    claim_expires_at = @expires,
    claim_attempt_count = claim_attempt_count + 1,
    stamp = NEWID()
OUTPUT inserted.id INTO @claimed (id);

SET @room = @room - @@ROWCOUNT;

WITH c AS (
    SELECT TOP (@room) t.*
    FROM {table} AS t WITH (UPDLOCK, READPAST, ROWLOCK, READCOMMITTEDLOCK, INDEX([{name}_pending_ix]))
    WHERE @P8 = 1
      AND @room > 0
      AND t.status = 0
      AND (t.not_before IS NULL OR t.not_before <= @now)
      AND (t.claim_expires_at IS NULL OR t.claim_expires_at <= @now)
      AND (@P2 IS NULL OR (t.topic = @P2 AND DATALENGTH(t.topic) = DATALENGTH(@P2)))
    ORDER BY t.created_at, t.id
)
UPDATE c
SET claim_owner = @P4,
    claim_token = NEWID(),
    claimed_at = @now,
    claim_expires_at = @expires,
    claim_attempt_count = claim_attempt_count + 1,
    stamp = NEWID()
OUTPUT inserted.id INTO @claimed (id);

SELECT t.*
FROM {table} AS t
JOIN @claimed AS c ON c.id = t.id;

COMMIT TRANSACTION;
