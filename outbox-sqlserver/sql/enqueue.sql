-- Writes a batch of new pending entries in one statement: the VALUES list holds one
-- enqueue_row.sql per entry. Every row's created_at defaults to one reading of the
-- server's clock, which comes back as `now` so the caller can build the entries it
-- wrote without reading them back. A duplicate id fails the whole statement (error 2627).
SET NOCOUNT ON;
DECLARE @now datetime2(6) = SYSUTCDATETIME();
INSERT INTO {table} (id, topic, partition_key, payload, headers, status, created_at,
                     updated_at, retry_due_at, not_before, attempt_count,
                     claim_attempt_count, stamp, slice_hash)
VALUES {rows};
SELECT @now AS now;
