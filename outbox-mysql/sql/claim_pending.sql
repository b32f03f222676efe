-- Locks up to ? claimable pending rows, oldest first (created time, then id), skipping
-- rows another transaction holds rather than waiting for them. Runs inside the claim's
-- READ COMMITTED transaction (claims.rs), which leases the rows it returns
-- (lease_rows.sql) before it commits.
--
-- Parameters, in order: now or NULL (the server's clock), topic or NULL, then the slice
-- count and index, the batch size and the most rows the statement may examine; lines
-- naming the slice or key order are left out of the forms that do not use them (claims
-- take four forms, see FilterForms).
--
-- The walk is the pending index's status-0 range in claim order, stopping after the
-- batch: nothing is sorted, and delivered rows (another range) are never visited. Under
-- READ COMMITTED a locking read locks only the index records it returns and releases the
-- rows the WHERE turns down, and it takes no gap locks, so it never blocks an enqueue.
-- Every column comes back, with the clock the statement judged at: the caller writes the
-- lease and builds the claims from them without reading the rows again.
--
-- In key order (the key_order_filter forms) the statement runs without its locking line,
-- as the choice of heads that lock_candidates.sql then locks. Few rows of a long backlog
-- may be heads, and a walk that has not filled its batch goes on to the end: such a
-- claim bounds it by the rows it examines (ROWS EXAMINED; what was found by then comes
-- back), walking the whole backlog only now and then (walks.rs). Claims not in key order
-- pass no bound.
SELECT t.seq, t.id, t.topic, t.partition_key, t.payload, t.headers, t.status,
       t.created_at, t.updated_at, t.not_before, t.next_retry_at, t.attempt_count,
       t.last_error, t.dead_letter_reason, t.delivered_at, t.provider_message_id,
       t.claim_owner, t.claim_token, t.claimed_at, t.claim_expires_at,
       t.claim_attempt_count, t.stamp, p.clock_now
FROM (SELECT CAST(COALESCE(?, UTC_TIMESTAMP(6)) AS DATETIME(6)) AS clock_now,
             CAST(? AS CHAR(255)) AS topic) AS p
JOIN {table} AS t FORCE INDEX ({name}_pending)
WHERE t.status = 0
  AND (t.not_before IS NULL OR t.not_before <= p.clock_now)
  AND (t.claim_expires_at IS NULL OR t.claim_expires_at <= p.clock_now)
  AND (p.topic IS NULL OR t.topic = p.topic)
{slice_filter}
{key_order_filter}
ORDER BY t.created_at, t.id
LIMIT ? ROWS EXAMINED ?
FOR UPDATE SKIP LOCKED
