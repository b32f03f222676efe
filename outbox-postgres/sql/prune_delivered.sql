-- Deletes up to $2 delivered rows delivered before $1, oldest first, skipping rows another
-- transaction holds so pruning never waits on (or blocks) a worker.
WITH doomed AS MATERIALIZED (
    SELECT id
    FROM {table}
    WHERE status = 1 AND delivered_at < $1::timestamptz
    ORDER BY delivered_at
    LIMIT $2::bigint
    FOR UPDATE SKIP LOCKED
)
DELETE FROM {table} AS t
USING doomed AS d
WHERE t.id = d.id AND t.status = 1
