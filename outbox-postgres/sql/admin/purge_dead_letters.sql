-- Deletes up to $2 dead letters: one id ($1), or any when $1 is NULL.
WITH doomed AS MATERIALIZED (
    SELECT id FROM {table}
    WHERE status = 5 AND ($1::uuid IS NULL OR id = $1::uuid)
    LIMIT $2::bigint
    FOR UPDATE SKIP LOCKED
)
DELETE FROM {table} AS t
USING doomed AS d
WHERE t.id = d.id AND t.status = 5
