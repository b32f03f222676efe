-- Deletes up to $2 entries in status $3 (3 failed or 5 dead-lettered): one id ($1), or
-- any when $1 is NULL; of topic $4, or any when $4 is NULL. Rows a worker holds locked are
-- skipped, not waited for.
WITH doomed AS MATERIALIZED (
    SELECT id FROM {table}
    WHERE status = $3::smallint AND ($1::uuid IS NULL OR id = $1::uuid)
      AND ($4::text IS NULL OR topic = $4::text)
    LIMIT $2::bigint
    FOR UPDATE SKIP LOCKED
)
DELETE FROM {table} AS t
USING doomed AS d
WHERE t.id = d.id AND t.status = $3::smallint
