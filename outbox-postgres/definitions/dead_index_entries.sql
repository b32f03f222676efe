-- How many entries of rows no longer pending a walk from the start of the pending index
-- steps over (what a held snapshot costs a claim that walks from the beginning); read by
-- outbox stats (sql/admin/stats.sql).

CREATE OR REPLACE FUNCTION {schema_prefix}"{name}_dead_index_entries"()
RETURNS bigint
LANGUAGE plpgsql
VOLATILE
SET enable_sort = off
SET enable_bitmapscan = off
SET enable_seqscan = off
SET jit = off
AS $entries$
DECLARE
    pending_idx CONSTANT regclass := '{schema_prefix}{name}_pending_idx';
    before bigint := pg_stat_get_xact_tuples_returned(pending_idx);
    found integer;
BEGIN
    SELECT count(*) INTO found
    FROM (SELECT 1 FROM {table} AS t WHERE t.status = 0 ORDER BY t.created_at, t.id LIMIT 1)
        AS first_pending;
    RETURN greatest(pg_stat_get_xact_tuples_returned(pending_idx) - before - found, 0);
END
$entries$;
