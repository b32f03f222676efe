-- Claims up to @P3 entries in one batch and one round trip: retry-ready rows first (in
-- retry order: they have waited longest), then pending rows (in pending order).
-- @P1 now (NULL: the server's clock), @P2 topic (NULL: every topic), @P3 batch size,
-- @P4 owner, @P5 and @P6 the lease in whole seconds and the remaining microseconds,
-- @P7 take retry-ready rows, @P8 take pending rows (bits), @P9 the slice count (NULL:
-- every slice) and @P10 the slice index, @P11 claim in per-key order (bit), @P12 and
-- @P13 the pending key (created_at, id) the pending walk starts at (NULL: the beginning),
-- @P14 whether a walk that comes up short walks behind that key too (bit). @P15 to @P21
-- share where this store's claims start with the table's other stores, in the same batch
-- (migration 3; @P15 NULL: nothing to share this time): @P15 the kind, @P16 the store's
-- id, @P17 and @P18 the oldest pending key its last claim took, @P19 seconds and @P20
-- further microseconds ago its last walk from the beginning started (DATEADD takes an
-- int), @P21 for how many microseconds after its start that walk holds the next one back
-- (zero unless it was costly), @P22 whether the share also deletes its kind's rows made
-- 256 or more shares of the table before it (bit: the store asks with its first share of a
-- kind and every 64th after; the newest row always stays). A share is a row added, never
-- one updated, outside the claim's transaction. @P23 the longest key run (in per-key
-- order: a head and the rows right behind it, see the last update).
--
-- The start keeps a claim's cost bounded by its batch while a snapshot transaction holds
-- ghost index rows (the filtered index entries of rows delivered since it began) from
-- cleanup: the walk ahead seeks to the start and skips everything before it. Only when it
-- comes up short (the queue is not backlogged) and @P14 allows it does a third read walk
-- the part behind the start, for the room left, so a row that became claimable there (a
-- late commit, a requeue, an expired lease) is taken; under a backlog the store walks
-- from the beginning on an interval (outbox_core::ClaimStarts). Claims in per-key order
-- keep a start of their own: a key's next row, claimable once the one before it is
-- delivered, may be behind it, and is taken as any row that became claimable there.
--
-- A slice keeps the rows whose slice hash (stored, or computed by the table's
-- _slice_hash function for rows written without one) is @P10 modulo @P9; its walk passes
-- over the rows of other slices, about @P9 times its batch. In per-key order a keyed row
-- is taken only if no row of its key not yet delivered or dead-lettered is older, or
-- holds a live lease: one seek in the key index (migration 2), whose read takes shared
-- locks on committed rows (READCOMMITTEDLOCK) and so waits for a completion of the key
-- in flight rather than reading past it. Only the oldest such row of a key can qualify,
-- and the update lock lets one worker take it, so a key has one lease at a time.
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
DECLARE @behind TABLE (id binary(16) NOT NULL PRIMARY KEY, head_order bigint NOT NULL,
                       step bigint NOT NULL);
DECLARE @room int = @P3;
DECLARE @shared bigint;

IF @P15 IS NOT NULL
BEGIN
    INSERT INTO {schema_prefix}[{name}_claim_starts]
        (kind, sharer, from_created, from_id, full_at, hold_back_us)
    VALUES (@P15, @P16, @P17, @P18,
            DATEADD(microsecond, -@P20, DATEADD(second, -@P19, SYSUTCDATETIME())), @P21);
    SET @shared = CAST(SCOPE_IDENTITY() AS bigint);
    IF @P22 = 1
        DELETE FROM {schema_prefix}[{name}_claim_starts]
        WHERE kind = @P15
          AND DATALENGTH(kind) = DATALENGTH(@P15)
          AND seq <= @shared - 256;
END;

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
      AND (@P9 IS NULL
           OR COALESCE(t.slice_hash, {schema_prefix}[{name}_slice_hash](t.partition_key, t.id))
              % @P9 = @P10)
      AND (@P11 = 0 OR t.partition_key IS NULL OR NOT EXISTS (
          SELECT 1
          FROM {table} AS k WITH (READCOMMITTEDLOCK, INDEX([{name}_key_ix]))
          WHERE k.key_hash = t.key_hash
            AND k.partition_key = t.partition_key COLLATE Latin1_General_100_BIN2
            AND k.status IN (0, 2, 3, 4)
            AND (k.created_at < t.created_at
                 OR (k.created_at = t.created_at AND k.id < t.id)
                 OR k.claim_expires_at > @now)))
    ORDER BY t.retry_due_at, t.id
)
UPDATE c
SET claim_owner = @P4,
    claim_token = NEWID(),
    claimed_at = @now,
    claim_expires_at = @expires,
    -- Capped below the column's maximum, so a count edited out of range cannot overflow.
    claim_attempt_count = CASE WHEN claim_attempt_count < 2147483647
                               THEN claim_attempt_count + 1 ELSE 2147483647 END,
    stamp = NEWID()
OUTPUT inserted.id INTO @claimed (id);

SET @room = @room - @@ROWCOUNT;

WITH c AS (
    SELECT TOP (@room) t.*
    FROM {table} AS t WITH (UPDLOCK, READPAST, ROWLOCK, READCOMMITTEDLOCK, INDEX([{name}_pending_ix]))
    WHERE @P8 = 1
      AND @room > 0
      AND t.status = 0
      AND t.created_at >= COALESCE(@P12, CAST('0001-01-01' AS datetime2(6)))
      AND (@P12 IS NULL OR t.created_at > @P12 OR t.id >= @P13)
      AND (t.not_before IS NULL OR t.not_before <= @now)
      AND (t.claim_expires_at IS NULL OR t.claim_expires_at <= @now)
      AND (@P2 IS NULL OR (t.topic = @P2 AND DATALENGTH(t.topic) = DATALENGTH(@P2)))
      AND (@P9 IS NULL
           OR COALESCE(t.slice_hash, {schema_prefix}[{name}_slice_hash](t.partition_key, t.id))
              % @P9 = @P10)
      AND (@P11 = 0 OR t.partition_key IS NULL OR NOT EXISTS (
          SELECT 1
          FROM {table} AS k WITH (READCOMMITTEDLOCK, INDEX([{name}_key_ix]))
          WHERE k.key_hash = t.key_hash
            AND k.partition_key = t.partition_key COLLATE Latin1_General_100_BIN2
            AND k.status IN (0, 2, 3, 4)
            AND (k.created_at < t.created_at
                 OR (k.created_at = t.created_at AND k.id < t.id)
                 OR k.claim_expires_at > @now)))
    ORDER BY t.created_at, t.id
)
UPDATE c
SET claim_owner = @P4,
    claim_token = NEWID(),
    claimed_at = @now,
    claim_expires_at = @expires,
    -- Capped below the column's maximum, so a count edited out of range cannot overflow.
    claim_attempt_count = CASE WHEN claim_attempt_count < 2147483647
                               THEN claim_attempt_count + 1 ELSE 2147483647 END,
    stamp = NEWID()
OUTPUT inserted.id INTO @claimed (id);

SET @room = @room - @@ROWCOUNT;

WITH c AS (
    SELECT TOP (@room) t.*
    FROM {table} AS t WITH (UPDLOCK, READPAST, ROWLOCK, READCOMMITTEDLOCK, INDEX([{name}_pending_ix]))
    WHERE @P8 = 1
      AND @room > 0
      AND @P12 IS NOT NULL
      AND @P14 = 1
      AND t.status = 0
      AND t.created_at <= @P12
      AND (t.created_at < @P12 OR t.id < @P13)
      AND (t.not_before IS NULL OR t.not_before <= @now)
      AND (t.claim_expires_at IS NULL OR t.claim_expires_at <= @now)
      AND (@P2 IS NULL OR (t.topic = @P2 AND DATALENGTH(t.topic) = DATALENGTH(@P2)))
      AND (@P9 IS NULL
           OR COALESCE(t.slice_hash, {schema_prefix}[{name}_slice_hash](t.partition_key, t.id))
              % @P9 = @P10)
      AND (@P11 = 0 OR t.partition_key IS NULL OR NOT EXISTS (
          SELECT 1
          FROM {table} AS k WITH (READCOMMITTEDLOCK, INDEX([{name}_key_ix]))
          WHERE k.key_hash = t.key_hash
            AND k.partition_key = t.partition_key COLLATE Latin1_General_100_BIN2
            AND k.status IN (0, 2, 3, 4)
            AND (k.created_at < t.created_at
                 OR (k.created_at = t.created_at AND k.id < t.id)
                 OR k.claim_expires_at > @now)))
    ORDER BY t.created_at, t.id
)
UPDATE c
SET claim_owner = @P4,
    claim_token = NEWID(),
    claimed_at = @now,
    claim_expires_at = @expires,
    -- Capped below the column's maximum, so a count edited out of range cannot overflow.
    claim_attempt_count = CASE WHEN claim_attempt_count < 2147483647
                               THEN claim_attempt_count + 1 ELSE 2147483647 END,
    stamp = NEWID()
OUTPUT inserted.id INTO @claimed (id);

SET @room = @room - @@ROWCOUNT;

-- Key runs (@P23, the longest run with its head; 1: heads alone): behind each keyed head
-- this claim took, in claim order, the key's next rows in key order (one range of the key
-- index per head) while each is pending, due, not leased and of the claim's topic; a row
-- found otherwise ends its run there. The runs take the room the heads left, whole runs
-- in head order first. Another claim reaches these rows only through their head, which
-- this transaction holds, so they are update-locked without READPAST: a row is waited
-- for, never skipped, and a run has no gap.
IF @P11 = 1 AND @P23 > 1 AND @room > 0
BEGIN
    INSERT INTO @behind (id, head_order, step)
    SELECT r.id, hd.head_order, r.step
    FROM (SELECT h.id, h.key_hash, h.partition_key, h.created_at,
                 ROW_NUMBER() OVER (ORDER BY CASE WHEN h.status = 0 THEN 1 ELSE 0 END,
                                             CASE WHEN h.status = 0 THEN h.created_at
                                                  ELSE h.retry_due_at END,
                                             h.id) AS head_order
          FROM @claimed AS c
          JOIN {table} AS h ON h.id = c.id
          WHERE h.partition_key IS NOT NULL) AS hd
    CROSS APPLY (
        SELECT b.id, b.step
        FROM (SELECT n.id, n.step,
                     MIN(n.takeable) OVER (ORDER BY n.step ROWS UNBOUNDED PRECEDING) AS unbroken
              FROM (SELECT TOP (@P23 - 1) f.id,
                           ROW_NUMBER() OVER (ORDER BY f.created_at, f.id) AS step,
                           CASE WHEN f.status = 0
                                 AND (f.not_before IS NULL OR f.not_before <= @now)
                                 AND (f.claim_expires_at IS NULL OR f.claim_expires_at <= @now)
                                 AND (@P2 IS NULL OR (f.topic = @P2
                                                      AND DATALENGTH(f.topic) = DATALENGTH(@P2)))
                                THEN 1 ELSE 0 END AS takeable
                    FROM {table} AS f WITH (READCOMMITTEDLOCK, INDEX([{name}_key_ix]))
                    WHERE f.key_hash = hd.key_hash
                      AND f.partition_key = hd.partition_key COLLATE Latin1_General_100_BIN2
                      AND f.status IN (0, 2, 3, 4)
                      AND f.created_at >= hd.created_at
                      AND (f.created_at > hd.created_at OR f.id > hd.id)
                    ORDER BY f.created_at, f.id) AS n) AS b
        WHERE b.unbroken = 1
    ) AS r;

    WITH c AS (
        SELECT TOP (@room) t.*
        FROM @behind AS b
        JOIN {table} AS t WITH (UPDLOCK, ROWLOCK, READCOMMITTEDLOCK) ON t.id = b.id
        WHERE t.status = 0
          AND (t.not_before IS NULL OR t.not_before <= @now)
          AND (t.claim_expires_at IS NULL OR t.claim_expires_at <= @now)
        ORDER BY b.head_order, b.step
    )
    UPDATE c
    SET claim_owner = @P4,
        claim_token = NEWID(),
        claimed_at = @now,
        claim_expires_at = @expires,
        -- Capped below the column's maximum, so a count edited out of range cannot overflow.
        claim_attempt_count = CASE WHEN claim_attempt_count < 2147483647
                                   THEN claim_attempt_count + 1 ELSE 2147483647 END,
        stamp = NEWID()
    OUTPUT inserted.id INTO @claimed (id);
END;

SELECT t.*
FROM {table} AS t
JOIN @claimed AS c ON c.id = t.id;

COMMIT TRANSACTION;
