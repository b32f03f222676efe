-- The same columns as exact_counts.sql at the cost of the live rows: every status but
-- delivered counted through its partial index (the table's `_live_counts`,
-- definitions/live_counts.sql), and delivered estimated as the server's count of the
-- table's live row versions (pg_stat_user_tables, kept as transactions commit and
-- corrected by every vacuum and analyze; $2 names the table) less the rows counted here.
-- The claims made are not summed (they would read every row). Part of stats.sql.
    SELECT clock.at, l.pending,
           greatest(coalesce(s.n_live_tup, 0)
                    - (l.pending + l.deferred + l.failed + l.retryable_failure
                       + l.dead_lettered), 0)::bigint AS delivered,
           l.deferred, l.failed, l.retryable_failure, l.dead_lettered, l.oldest_pending,
           l.retry_ready, l.in_flight, l.expired,
           NULL::bigint AS claims_made,
           true AS delivered_estimated
    FROM clock
    CROSS JOIN LATERAL {schema_prefix}"{name}_live_counts"(clock.at) AS l
    LEFT JOIN pg_stat_user_tables AS s ON s.relid = to_regclass($2::text)
