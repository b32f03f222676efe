-- Locks the rows a claim in key order chose (heads found by the claim statements without
-- locking, and the rows of their runs found by run_rows.sql), in the claim's transaction,
-- skipping rows another transaction holds, and only those still claimable: pending and
-- due, or retry-ready, not under a live lease, of the claim's topic. The caller keeps
-- of each run its head and the steps behind it that came back without a gap: a row
-- skipped or turned down ends its run there (a head, the whole run).
--
-- The choice was made without locks because a locking read locks what its key checks
-- read too (MariaDB gives a statement's subqueries its locking clause, without SKIP
-- LOCKED), so claims and completions of one key would wait on each other. Between the
-- choice and this lock a head stays a head (only an older row could displace it), and a
-- row becomes leased or finished only under a lock this statement then skips, or is
-- turned down for.
--
-- Parameters: now (the clock the choice was judged at), topic or NULL, a JSON array of
-- the rows' clustered keys. Columns as claim_pending.sql's.
-- The JSON rows are read first and each row reached through its key (STRAIGHT_JOIN,
-- FORCE INDEX): on a small table the server would scan it instead, and it would lock
-- every row it reads, skipped or not.
SELECT t.seq, t.id, t.topic, t.partition_key, t.payload, t.headers, t.status,
       t.created_at, t.updated_at, t.not_before, t.next_retry_at, t.attempt_count,
       t.last_error, t.dead_letter_reason, t.delivered_at, t.provider_message_id,
       t.claim_owner, t.claim_token, t.claimed_at, t.claim_expires_at,
       t.claim_attempt_count, t.stamp, p.clock_now
FROM (SELECT CAST(? AS DATETIME(6)) AS clock_now, CAST(? AS CHAR(255)) AS topic) AS p
JOIN JSON_TABLE(?, '$[*]' COLUMNS (seq BIGINT PATH '$')) AS j
STRAIGHT_JOIN {table} AS t FORCE INDEX (PRIMARY) ON t.seq = j.seq
WHERE CASE WHEN t.status = 0 THEN t.not_before IS NULL OR t.not_before <= p.clock_now
           WHEN t.status IN (2, 4) THEN t.next_retry_at IS NULL OR t.next_retry_at <= p.clock_now
           ELSE FALSE
      END
  AND (t.claim_expires_at IS NULL OR t.claim_expires_at <= p.clock_now)
  AND (p.topic IS NULL OR t.topic = p.topic)
FOR UPDATE SKIP LOCKED
