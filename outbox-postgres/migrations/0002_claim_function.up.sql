-- Claims run inside this function so that their plan never depends on the table's
-- statistics. A queue table's statistics are stale by nature (a burst lands between two
-- autovacuum runs, or autovacuum is off); without them the planner takes the pending
-- partial index for a handful of rows and claims by bitmap-scanning every pending row and
-- sorting them, so one claim costs the whole backlog. The SET clauses below hold only
-- while the function runs: with sorts, bitmap scans and sequential scans priced out, the
-- only plan left is an ordered walk of the partial index that stops after the batch.
--
-- p_retry / p_pending choose the groups: retry-ready rows first (they have waited
-- longest, in retry order), then pending rows (in pending order) up to p_limit together.
-- The retry walk is bounded above by the claim time, so parked retries due later are never
-- visited. Rows another transaction holds are skipped, not waited for; eligibility is
-- re-checked on the locked row version. p_now NULL means the database clock; p_lease_us
-- is the lease in microseconds. Rows come back in no particular order.
CREATE FUNCTION {schema_prefix}"{name}_claim"(
    p_now timestamptz, p_topic text, p_limit bigint, p_owner text, p_lease_us bigint,
    p_retry boolean, p_pending boolean)
RETURNS SETOF {table}
LANGUAGE sql
VOLATILE
SET enable_sort = off
SET enable_bitmapscan = off
SET enable_seqscan = off
AS $claim$
WITH retry AS MATERIALIZED (
    SELECT t.id, t.status
    FROM {table} AS t
    WHERE p_retry
      AND t.status IN (2, 4)
      AND COALESCE(t.next_retry_at, t.updated_at) <= COALESCE(p_now, now())
      AND (t.next_retry_at IS NULL OR t.next_retry_at <= COALESCE(p_now, now()))
      AND (t.claim_expires_at IS NULL OR t.claim_expires_at <= COALESCE(p_now, now()))
      AND (p_topic IS NULL OR t.topic = p_topic)
    ORDER BY COALESCE(t.next_retry_at, t.updated_at), t.id
    LIMIT p_limit
    FOR UPDATE SKIP LOCKED
),
pending AS MATERIALIZED (
    SELECT t.id, t.status
    FROM {table} AS t
    WHERE p_pending
      AND t.status = 0
      AND (t.not_before IS NULL OR t.not_before <= COALESCE(p_now, now()))
      AND (t.claim_expires_at IS NULL OR t.claim_expires_at <= COALESCE(p_now, now()))
      AND (p_topic IS NULL OR t.topic = p_topic)
    ORDER BY t.created_at, t.id
    LIMIT p_limit - (SELECT count(*) FROM retry)
    FOR UPDATE SKIP LOCKED
),
candidates AS (
    SELECT id, status FROM retry
    UNION ALL
    SELECT id, status FROM pending
)
UPDATE {table} AS t
SET claim_owner = p_owner,
    claim_token = gen_random_uuid(),
    claimed_at = COALESCE(p_now, now()),
    claim_expires_at = COALESCE(p_now, now()) + p_lease_us * interval '1 microsecond',
    claim_attempt_count = t.claim_attempt_count + 1,
    stamp = gen_random_uuid()
FROM candidates AS c
WHERE t.id = c.id
  AND t.status = c.status
  AND (t.claim_expires_at IS NULL OR t.claim_expires_at <= COALESCE(p_now, now()))
  AND CASE WHEN t.status = 0
           THEN t.not_before IS NULL OR t.not_before <= COALESCE(p_now, now())
           ELSE t.next_retry_at IS NULL OR t.next_retry_at <= COALESCE(p_now, now())
      END
RETURNING t.*
$claim$;
