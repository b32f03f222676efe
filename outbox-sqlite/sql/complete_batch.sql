-- Records a batch of claimed transitions in one statement. ?1 is a JSON array with one
-- object per completion: `id`, `owner`, `token` (the claim; ids, tokens and stamps as
-- hex), and the outcome fields `status`, `next_retry_at`, `attempt_count`, `last_error`,
-- `dead_letter_reason`, `delivered_at`, `provider_message_id`, `updated_at`, `stamp`.
--
-- A row is written if, and only if, it still holds the claim's owner and token and is not
-- terminal; its claim fields are cleared. The statement walks the array and reaches each
-- row by its primary key. The objects are copied out of the array once, into `batch`:
-- read from json_each directly, every one of the twelve fields would render its object
-- to text again (the completion took 1.7 times as long). Only the ids of the written rows
-- come back: the caller holds everything else it wrote, and reads the refused rows (the
-- exception) afterwards in the same write transaction.
--
-- On a table prepared for per-key order the head flag's line is kept (statements.rs
-- leaves it out of the form for other tables): a row that finishes (delivered or
-- dead-lettered) drops its head flag as it does. That tells the table's status trigger
-- (sql/ordered/prepare.sql) that the store moves the heads of the keys it finished
-- itself, with one statement for the batch (sql/move_heads.sql), instead of a trigger
-- program for each row. A finished row's flag counts for nothing.
WITH batch AS MATERIALIZED (SELECT value AS v FROM json_each(?1))
UPDATE {table} AS t
SET status = i.status,
    {moves_heads}is_head = iif(i.status IN (1, 5), 0, t.is_head),
    next_retry_at = i.next_retry_at,
    attempt_count = i.attempt_count,
    last_error = i.last_error,
    dead_letter_reason = i.dead_letter_reason,
    delivered_at = i.delivered_at,
    provider_message_id = i.provider_message_id,
    updated_at = i.updated_at,
    stamp = i.stamp,
    claim_owner = NULL,
    claim_token = NULL,
    claimed_at = NULL,
    claim_expires_at = NULL
FROM (
    SELECT unhex(v ->> 'id') AS id,
           v ->> 'owner' AS owner,
           unhex(v ->> 'token') AS token,
           v ->> 'status' AS status,
           v ->> 'next_retry_at' AS next_retry_at,
           v ->> 'attempt_count' AS attempt_count,
           v ->> 'last_error' AS last_error,
           v ->> 'dead_letter_reason' AS dead_letter_reason,
           v ->> 'delivered_at' AS delivered_at,
           v ->> 'provider_message_id' AS provider_message_id,
           v ->> 'updated_at' AS updated_at,
           unhex(v ->> 'stamp') AS stamp
    FROM batch
) AS i
WHERE t.id = i.id
  AND t.claim_owner = i.owner
  AND t.claim_token = i.token
  AND t.status NOT IN (1, 5)
RETURNING id
