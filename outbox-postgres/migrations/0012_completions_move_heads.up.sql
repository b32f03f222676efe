-- The store's completions move their keys' heads themselves, once per batch. Until now the
-- status trigger of a table prepared for per-key order (sql/ordered/heads.sql) ran the
-- head function once for every head that finished: a PL/pgSQL call and its reads per
-- delivered row, most of an ordered completion's extra cost when every key has one row.
-- The batch completion (definitions/complete_batch.sql, revision 3) now says, in a setting
-- local to its transaction (outbox.completion_moves_heads), that it moves the heads of
-- the rows it finishes itself, in one statement after its write; the trigger does not run
-- for a finishing row while the setting is on. Every other writer (a host's own update,
-- an operator's requeue, a delete) runs the trigger as before.
--
-- Expanding: a drain of the previous release calls the same batch completion, so its
-- heads move with it; and the trigger of version 11, restored by the way down, runs for
-- every finishing head whatever the setting, which moves a head twice to the same row.
DO $heads$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_trigger
               WHERE tgrelid = '{table}'::regclass AND tgname = '{name}_heads_after_status') THEN
        DROP TRIGGER {name}_heads_after_status ON {table};
        CREATE TRIGGER {name}_heads_after_status AFTER UPDATE OF status ON {table}
            FOR EACH ROW WHEN (NEW.partition_key IS NOT NULL
                               AND (OLD.status IN (1, 5)) IS DISTINCT FROM (NEW.status IN (1, 5))
                               AND ((OLD.is_head
                                    AND current_setting('outbox.completion_moves_heads', true)
                                        IS DISTINCT FROM 'on')
                                   OR NEW.status NOT IN (1, 5)))
            EXECUTE FUNCTION {schema_prefix}"{name}_keep_heads"();
    END IF;
END
$heads$;
