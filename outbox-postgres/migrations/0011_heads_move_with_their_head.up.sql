-- A key's head moves only when the head itself finishes. The status trigger of a table
-- prepared for per-key order (sql/ordered/heads.sql) ran the head function for every row
-- of a key that was delivered or dead-lettered, and for a row behind the head it found
-- the same head and wrote nothing: three statements per row, most of an ordered
-- completion's cost. It now runs for a row that was its key's head when it finished, and
-- for a row that becomes unfinished again (a requeue), as before.
--
-- Why nothing is missed: a row that is not its key's head has an older unfinished row
-- before it, so its finishing leaves the head where it is. A head finished beside it by
-- another transaction moves the flag with a locking read of the key's first row, which
-- waits for this row's writer and skips the row once it is finished; and a row whose flag
-- that other transaction set first is locked by it, so this row's write waits, sees the
-- flag, and runs the trigger.
--
-- Recreated here on tables already prepared; tables drained unordered have no trigger
-- and are left alone. Expanding: the same function, called less often, so a drain of
-- the previous release runs on it unchanged.
DO $heads$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_trigger
               WHERE tgrelid = '{table}'::regclass AND tgname = '{name}_heads_after_status') THEN
        DROP TRIGGER {name}_heads_after_status ON {table};
        CREATE TRIGGER {name}_heads_after_status AFTER UPDATE OF status ON {table}
            FOR EACH ROW WHEN (NEW.partition_key IS NOT NULL
                               AND (OLD.status IN (1, 5)) IS DISTINCT FROM (NEW.status IN (1, 5))
                               AND (OLD.is_head OR NEW.status NOT IN (1, 5)))
            EXECUTE FUNCTION {schema_prefix}"{name}_keep_heads"();
    END IF;
END
$heads$;
