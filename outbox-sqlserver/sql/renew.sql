-- Extends the leases of many claims in one batch and one round trip. @P1 is a JSON array
-- of objects with id (hex), owner and token; @P2 now (NULL: the server's clock); @P3 and @P4 the new
-- lease in whole seconds and the remaining microseconds. Locking and judging as in
-- complete_batch.sql: only rows that are not terminal and still hold the claim's owner
-- and token are extended; every existing row comes back once with `applied`.
SET NOCOUNT ON;
SET XACT_ABORT ON;
DECLARE @now datetime2(6) = COALESCE(@P2, SYSUTCDATETIME());
DECLARE @input TABLE (
    id    binary(16)       NOT NULL PRIMARY KEY,
    owner nvarchar(255)    NOT NULL,
    token uniqueidentifier NOT NULL
);
INSERT INTO @input
SELECT CONVERT(binary(16), j.id, 1), j.owner, j.token
FROM OPENJSON(@P1) WITH (
    id    varchar(34)      '$.id',
    owner nvarchar(255)    '$.owner',
    token uniqueidentifier '$.token'
) AS j;
DECLARE @applied TABLE (id binary(16) NOT NULL PRIMARY KEY);

BEGIN TRANSACTION;

UPDATE t
SET claim_expires_at = DATEADD(microsecond, @P4, DATEADD(second, @P3, @now)),
    stamp = NEWID()
OUTPUT inserted.id INTO @applied (id)
FROM {table} AS t WITH (UPDLOCK, ROWLOCK, FORCESEEK)
JOIN @input AS i ON i.id = t.id
WHERE t.status NOT IN (1, 5)
  AND t.claim_owner = i.owner
  AND DATALENGTH(t.claim_owner) = DATALENGTH(i.owner)
  AND t.claim_token = i.token;

SELECT CAST(CASE WHEN a.id IS NULL THEN 0 ELSE 1 END AS bit) AS applied, t.*
FROM {table} AS t WITH (UPDLOCK, ROWLOCK, FORCESEEK)
JOIN @input AS i ON i.id = t.id
LEFT JOIN @applied AS a ON a.id = t.id;

COMMIT TRANSACTION;
