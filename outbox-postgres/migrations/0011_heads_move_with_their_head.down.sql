-- Back to version 10: the status trigger of a prepared table runs for every row of a key
-- that finishes or becomes unfinished again.
DO $heads$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_trigger
               WHERE tgrelid = '{table}'::regclass AND tgname = '{name}_heads_after_status') THEN
        DROP TRIGGER {name}_heads_after_status ON {table};
        CREATE TRIGGER {name}_heads_after_status AFTER UPDATE OF status ON {table}
            FOR EACH ROW WHEN (NEW.partition_key IS NOT NULL
                               AND (OLD.status IN (1, 5)) IS DISTINCT FROM (NEW.status IN (1, 5)))
            EXECUTE FUNCTION {schema_prefix}"{name}_keep_heads"();
    END IF;
END
$heads$;
