-- Everything `outbox stats` shows, in one statement and one row. The counts come from one of
-- exact_counts.sql (every row read) and live_counts.sql (the live rows read, delivered
-- estimated): a CTE body with the columns at, one per status, oldest_pending,
-- retry_ready, in_flight, expired, claims_made and delivered_estimated. $1 is the time
-- the leases are judged at (NULL: the database's clock).
--
-- Beside them, what holds back the removal of the table's dead row versions: its dead
-- and live row counts as the server's statistics last had them ($2 is the table's
-- quoted, qualified name; zero before the statistics know the table), and the oldest
-- snapshot still held by another session, a prepared transaction or a replication slot:
-- its age in transactions, how long its transaction has been open (in microseconds,
-- unknown for a slot), and who holds it. Only a role with pg_read_all_stats (granted by
-- pg_monitor) sees the sessions of other roles. And what the dead versions cost a claim
-- now: the index entries a walk from the beginning of the pending index steps over before
-- the first pending row (the table's `_dead_index_entries`, definitions/dead_index_entries.sql).
WITH clock AS (SELECT COALESCE($1::timestamptz, now()) AS at),
counts AS (
{counts}
),
held AS (
    -- A session idle in a writing transaction has no snapshot between statements, but
    -- its transaction id holds dead rows back all the same.
    SELECT coalesce(backend_xmin, backend_xid) AS xmin,
           clock_timestamp() - xact_start AS open_for,
           format('session %s (%s, application %s)', pid, coalesce(state, 'state unknown'),
                  coalesce(nullif(application_name, ''), 'unnamed')) AS holder
    FROM pg_stat_activity
    WHERE coalesce(backend_xmin, backend_xid) IS NOT NULL
      AND pid <> pg_backend_pid()
    UNION ALL
    SELECT transaction, clock_timestamp() - prepared, format('prepared transaction %L', gid)
    FROM pg_prepared_xacts
    UNION ALL
    SELECT xmin, NULL, format('replication slot %L', slot_name)
    FROM pg_replication_slots
    WHERE xmin IS NOT NULL
),
oldest AS (
    SELECT age(xmin)::bigint AS xmin_age,
           (extract(epoch FROM open_for) * 1000000)::bigint AS open_for_us,
           holder
    FROM held
    ORDER BY age(xmin) DESC
    LIMIT 1
),
cleanup AS (
    SELECT coalesce(s.n_dead_tup, 0)::bigint AS dead_rows,
           coalesce(s.n_live_tup, 0)::bigint AS live_rows,
           o.xmin_age,
           o.open_for_us,
           o.holder
    FROM (SELECT 1) AS one
    LEFT JOIN pg_stat_user_tables AS s ON s.relid = to_regclass($2::text)
    LEFT JOIN oldest AS o ON true
)
SELECT counts.*, cleanup.*,
       {schema_prefix}"{name}_dead_index_entries"() AS dead_index_entries
FROM counts CROSS JOIN cleanup
