-- Back to version 11: the status trigger of a prepared table runs for every head that
-- finishes, whatever the batch completion's setting says.
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
