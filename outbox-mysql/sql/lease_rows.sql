-- Leases the rows a claim locked (claim_pending.sql, claim_retry.sql), in the same
-- transaction. ? is a JSON array with one object per row: `seq` (the row's clustered
-- key), `token` and `stamp` (new uuids, as hex); then the owner, the claim time and the
-- lease's end. Each row is reached by its clustered key. The attempt count is capped
-- before the increment, so a count edited out of range by hand cannot fail the
-- statement: the claim reports the row as corrupt instead.
-- The JSON rows are read first and each row reached through its key (STRAIGHT_JOIN,
-- FORCE INDEX): on a small table the server would scan it instead, and the statement
-- would wait on every row another transaction holds, its own or not.
UPDATE JSON_TABLE(?, '$[*]' COLUMNS (
    seq   BIGINT   PATH '$.seq',
    token CHAR(32) PATH '$.token',
    stamp CHAR(32) PATH '$.stamp'
)) AS j
STRAIGHT_JOIN {table} AS t FORCE INDEX (PRIMARY) ON t.seq = j.seq
SET t.claim_owner = ?,
    t.claim_token = UNHEX(j.token),
    t.claimed_at = ?,
    t.claim_expires_at = ?,
    t.claim_attempt_count = LEAST(t.claim_attempt_count, 4294967295) + 1,
    t.stamp = UNHEX(j.stamp)
