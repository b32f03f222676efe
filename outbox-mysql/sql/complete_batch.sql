-- Records a batch of claimed transitions in one statement. ? is a JSON array with one
-- object per completion: the claim (`id`, `owner`, `token`; uuids as hex) and the
-- outcome fields `status`, `next_retry_at`, `attempt_count`, `last_error`,
-- `dead_letter_reason`, `delivered_at`, `provider_message_id`, `updated_at` (times as
-- 'YYYY-MM-DD hh:mm:ss.ffffff' in UTC, or null) and `stamp` (hex).
--
-- A row is written if, and only if, it still holds the claim's owner and token and is
-- not terminal; its claim fields are cleared. Each row is reached through the id index.
-- The statement runs in a transaction (complete.rs): when it wrote fewer rows than it
-- was given, the caller reads the batch's rows before committing and tells its own
-- writes by their stamps.
-- The JSON rows are read first and each row reached through its key (STRAIGHT_JOIN,
-- FORCE INDEX): on a small table the server would scan it instead, and the statement
-- would wait on every row another transaction holds, its own or not.
UPDATE JSON_TABLE(?, '$[*]' COLUMNS (
    id                  CHAR(32)     PATH '$.id',
    owner               VARCHAR(255) PATH '$.owner',
    token               CHAR(32)     PATH '$.token',
    status              TINYINT      PATH '$.status',
    next_retry_at       DATETIME(6)  PATH '$.next_retry_at',
    attempt_count       BIGINT       PATH '$.attempt_count',
    last_error          LONGTEXT     PATH '$.last_error',
    dead_letter_reason  LONGTEXT     PATH '$.dead_letter_reason',
    delivered_at        DATETIME(6)  PATH '$.delivered_at',
    provider_message_id LONGTEXT     PATH '$.provider_message_id',
    updated_at          DATETIME(6)  PATH '$.updated_at',
    stamp               CHAR(32)     PATH '$.stamp'
)) AS j
STRAIGHT_JOIN {table} AS t FORCE INDEX ({name}_id) ON t.id = UNHEX(j.id)
SET t.status = j.status,
    t.next_retry_at = j.next_retry_at,
    t.attempt_count = j.attempt_count,
    t.last_error = j.last_error,
    t.dead_letter_reason = j.dead_letter_reason,
    t.delivered_at = j.delivered_at,
    t.provider_message_id = j.provider_message_id,
    t.updated_at = j.updated_at,
    t.stamp = UNHEX(j.stamp),
    t.claim_owner = NULL,
    t.claim_token = NULL,
    t.claimed_at = NULL,
    t.claim_expires_at = NULL
WHERE t.claim_owner = j.owner
  AND t.claim_token = UNHEX(j.token)
  AND t.status NOT IN (1, 5)
