-- Writes the outcome fields of one entry if its stamp is still the durable one, in one
-- round trip. @P1 id, @P2 expected stamp, @P3 status, @P4 next_retry_at,
-- @P5 attempt_count, @P6 last_error, @P7 dead_letter_reason, @P8 delivered_at,
-- @P9 provider_message_id, @P10 now (NULL: the server's clock). The row is judged and
-- written under an update lock held to the end, and comes back once (with `applied`),
-- or not at all when it does not exist.
SET NOCOUNT ON;
SET XACT_ABORT ON;
DECLARE @now datetime2(6) = COALESCE(@P10, SYSUTCDATETIME());
DECLARE @applied TABLE (id binary(16) NOT NULL PRIMARY KEY);

BEGIN TRANSACTION;

UPDATE t
SET status = @P3,
    next_retry_at = @P4,
    retry_due_at = COALESCE(@P4, @now),
    attempt_count = @P5,
    last_error = @P6,
    dead_letter_reason = @P7,
    delivered_at = @P8,
    provider_message_id = @P9,
    updated_at = @now,
    claim_owner = NULL,
    claim_token = NULL,
    claimed_at = NULL,
    claim_expires_at = NULL,
    stamp = NEWID()
OUTPUT inserted.id INTO @applied (id)
FROM {table} AS t WITH (UPDLOCK, ROWLOCK, FORCESEEK)
WHERE t.id = @P1
  AND t.status NOT IN (1, 5)
  AND t.stamp = @P2;

SELECT CAST(CASE WHEN a.id IS NULL THEN 0 ELSE 1 END AS bit) AS applied, t.*
FROM {table} AS t WITH (UPDLOCK, ROWLOCK, FORCESEEK)
LEFT JOIN @applied AS a ON a.id = t.id
WHERE t.id = @P1;

COMMIT TRANSACTION;
