-- The columns of stats.sql at the cost of the live rows: the statuses other than
-- delivered are ranges of the claim index (status, created_at, id), walked without the
-- delivered range between them, so the history behind them is never read. Delivered is
-- estimated: InnoDB's count of the table's rows (information_schema, kept as rows are
-- written and deleted and corrected by every statistics run) less the live rows. The
-- claims made are not summed (they would read every row). Leases are judged at ? (NULL:
-- the server's clock), which comes back as `clock_now`.
SELECT
    CAST(COALESCE(SUM(t.status = 0), 0) AS SIGNED) AS pending,
    CAST(GREATEST(COALESCE(MAX(p.table_rows), 0) - COUNT(t.status), 0) AS SIGNED) AS delivered,
    CAST(COALESCE(SUM(t.status = 2), 0) AS SIGNED) AS deferred,
    CAST(COALESCE(SUM(t.status = 3), 0) AS SIGNED) AS failed,
    CAST(COALESCE(SUM(t.status = 4), 0) AS SIGNED) AS retryable_failure,
    CAST(COALESCE(SUM(t.status = 5), 0) AS SIGNED) AS dead_lettered,
    MIN(CASE WHEN t.status = 0 THEN t.created_at END) AS oldest_pending,
    CAST(COALESCE(SUM(t.status IN (2, 4)
        AND (t.next_retry_at IS NULL OR t.next_retry_at <= p.clock_now)), 0) AS SIGNED) AS retry_ready,
    CAST(COALESCE(SUM(t.status <> 5
        AND t.claim_expires_at > p.clock_now), 0) AS SIGNED) AS in_flight,
    CAST(COALESCE(SUM(t.status <> 5
        AND t.claim_expires_at <= p.clock_now), 0) AS SIGNED) AS expired,
    CAST(NULL AS SIGNED) AS claims_made,
    CAST(1 AS SIGNED) AS delivered_estimated,
    MAX(p.clock_now) AS clock_now
FROM (
    SELECT CAST(COALESCE(?, UTC_TIMESTAMP(6)) AS DATETIME(6)) AS clock_now,
           -- A scalar subquery: as a joined table, MariaDB would read every database's
           -- tables to find this one.
           (SELECT CAST(TABLE_ROWS AS SIGNED) FROM information_schema.TABLES
            WHERE TABLE_SCHEMA = {schema_literal} AND TABLE_NAME = '{name}') AS table_rows
) AS p
LEFT JOIN {table} AS t FORCE INDEX ({name}_pending) ON t.status IN (0, 2, 3, 4, 5)
