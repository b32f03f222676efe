-- Extends the leases of many claims in one statement. ? is a JSON array with one object
-- per claim: `id`, `owner`, `token` and the new `stamp` (uuids as hex); then now or NULL
-- (the server's clock) and the lease in microseconds. Only rows that are not terminal
-- and still hold the claim's owner and token are extended. The caller reads the rows
-- back in the same transaction (get_many.sql) and tells the renewed ones by their new
-- stamps.
-- The JSON rows are read first and each row reached through its key (STRAIGHT_JOIN,
-- FORCE INDEX): on a small table the server would scan it instead, and the statement
-- would wait on every row another transaction holds, its own or not.
UPDATE JSON_TABLE(?, '$[*]' COLUMNS (
    id    CHAR(32)     PATH '$.id',
    owner VARCHAR(255) PATH '$.owner',
    token CHAR(32)     PATH '$.token',
    stamp CHAR(32)     PATH '$.stamp'
)) AS j
STRAIGHT_JOIN {table} AS t FORCE INDEX ({name}_id) ON t.id = UNHEX(j.id)
SET t.claim_expires_at = CAST(COALESCE(?, UTC_TIMESTAMP(6)) AS DATETIME(6)) + INTERVAL ? MICROSECOND,
    t.stamp = UNHEX(j.stamp)
WHERE t.claim_owner = j.owner
  AND t.claim_token = UNHEX(j.token)
  AND t.status NOT IN (1, 5)
