-- Records many claimed transitions in one batch and one round trip. @P1 is a JSON array,
-- one object per completion: id (hex), owner, token, status, next_retry_at,
-- attempt_count, last_error, dead_letter_reason, delivered_at, stamp_delivered_now,
-- provider_message_id, at (NULL: the server's clock) and stamp (the stamp the write
-- leaves, chosen by the request so a retry can recognise its own write).
--
-- In one transaction: the UPDATE writes only rows that are not terminal and still hold
-- the claim's owner and token, and keeps an update lock on every row it looked at
-- (written or not) until the end, so the SELECT that follows reports, for a refused row,
-- the very state that refused it. The input is keyed by id, so rows are locked in id
-- order (FORCESEEK: a seek per input row, never a scan that would wait on every row a
-- claim holds) and two completion batches cannot deadlock each other. Every existing row comes
-- back once with `applied`; a row that is not returned does not exist. A written row
-- comes back without its payload (the caller holds it in its claim).
SET NOCOUNT ON;
SET XACT_ABORT ON;
DECLARE @input TABLE (
    id                  binary(16)       NOT NULL PRIMARY KEY,
    owner               nvarchar(255)    NOT NULL,
    token               uniqueidentifier NOT NULL,
    status              tinyint          NOT NULL,
    next_retry_at       datetime2(6)     NULL,
    attempt_count       int              NOT NULL,
    last_error          nvarchar(max)    NULL,
    dead_letter_reason  nvarchar(max)    NULL,
    delivered_at        datetime2(6)     NULL,
    stamp_delivered_now bit              NOT NULL,
    provider_message_id nvarchar(max)    NULL,
    at                  datetime2(6)     NOT NULL,
    stamp               uniqueidentifier NOT NULL
);
INSERT INTO @input
SELECT CONVERT(binary(16), j.id, 1), j.owner, j.token, j.status, j.next_retry_at,
       j.attempt_count, j.last_error, j.dead_letter_reason, j.delivered_at,
       j.stamp_delivered_now, j.provider_message_id, COALESCE(j.at, SYSUTCDATETIME()),
       j.stamp
FROM OPENJSON(@P1) WITH (
    id                  varchar(34)      '$.id',
    owner               nvarchar(255)    '$.owner',
    token               uniqueidentifier '$.token',
    status              tinyint          '$.status',
    next_retry_at       datetime2(6)     '$.next_retry_at',
    attempt_count       int              '$.attempt_count',
    last_error          nvarchar(max)    '$.last_error',
    dead_letter_reason  nvarchar(max)    '$.dead_letter_reason',
    delivered_at        datetime2(6)     '$.delivered_at',
    stamp_delivered_now bit              '$.stamp_delivered_now',
    provider_message_id nvarchar(max)    '$.provider_message_id',
    at                  datetime2(6)     '$.at',
    stamp               uniqueidentifier '$.stamp'
) AS j;
DECLARE @applied TABLE (id binary(16) NOT NULL PRIMARY KEY);

BEGIN TRANSACTION;

UPDATE t
SET status = i.status,
    next_retry_at = i.next_retry_at,
    retry_due_at = COALESCE(i.next_retry_at, i.at),
    attempt_count = i.attempt_count,
    last_error = i.last_error,
    dead_letter_reason = i.dead_letter_reason,
    delivered_at = CASE WHEN i.stamp_delivered_now = 1 THEN i.at ELSE i.delivered_at END,
    provider_message_id = i.provider_message_id,
    updated_at = i.at,
    claim_owner = NULL,
    claim_token = NULL,
    claimed_at = NULL,
    claim_expires_at = NULL,
    stamp = i.stamp
OUTPUT inserted.id INTO @applied (id)
FROM {table} AS t WITH (UPDLOCK, ROWLOCK, FORCESEEK)
JOIN @input AS i ON i.id = t.id
WHERE t.status NOT IN (1, 5)
  AND t.claim_owner = i.owner
  AND DATALENGTH(t.claim_owner) = DATALENGTH(i.owner)
  AND t.claim_token = i.token;

SELECT CAST(CASE WHEN a.id IS NULL THEN 0 ELSE 1 END AS bit) AS applied,
       t.id, t.topic, t.partition_key,
       CASE WHEN a.id IS NULL THEN t.payload END AS payload,
       t.headers, t.status, t.created_at, t.updated_at, t.not_before, t.next_retry_at,
       t.attempt_count, t.last_error, t.dead_letter_reason, t.delivered_at,
       t.provider_message_id, t.claim_owner, t.claim_token, t.claimed_at,
       t.claim_expires_at, t.claim_attempt_count, t.stamp
FROM {table} AS t WITH (UPDLOCK, ROWLOCK, FORCESEEK)
JOIN @input AS i ON i.id = t.id
LEFT JOIN @applied AS a ON a.id = t.id;

COMMIT TRANSACTION;
