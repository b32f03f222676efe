-- Locks up to ? retry-ready rows (deferred or retryable failures whose time has come),
-- in retry order (retry time, or last update without one; then id), skipping rows
-- another transaction holds. Parameters and conditions as in claim_pending.sql.
--
-- The walk is the retry index up to the claim time, stopping after the batch: retries
-- parked for later are past the range's end and never visited, and rows in no retry
-- state hold NULL there, before its start.
SELECT t.seq, t.id, t.topic, t.partition_key, t.payload, t.headers, t.status,
       t.created_at, t.updated_at, t.not_before, t.next_retry_at, t.attempt_count,
       t.last_error, t.dead_letter_reason, t.delivered_at, t.provider_message_id,
       t.claim_owner, t.claim_token, t.claimed_at, t.claim_expires_at,
       t.claim_attempt_count, t.stamp, p.clock_now
FROM (SELECT CAST(COALESCE(?, UTC_TIMESTAMP(6)) AS DATETIME(6)) AS clock_now,
             CAST(? AS CHAR(255)) AS topic) AS p
JOIN {table} AS t FORCE INDEX ({name}_retry)
WHERE t.retry_at <= p.clock_now
  AND t.status IN (2, 4)
  AND (t.next_retry_at IS NULL OR t.next_retry_at <= p.clock_now)
  AND (t.claim_expires_at IS NULL OR t.claim_expires_at <= p.clock_now)
  AND (p.topic IS NULL OR t.topic = p.topic)
{slice_filter}
{key_order_filter}
ORDER BY t.retry_at, t.id
LIMIT ? ROWS EXAMINED ?
FOR UPDATE SKIP LOCKED
