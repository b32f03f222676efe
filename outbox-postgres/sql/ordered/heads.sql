-- The second half of `enable_ordered_claims`, in one transaction, after the indexes: the
-- triggers that keep each key's head (definitions/keep_heads.sql), and the heads of the
-- rows already there, marked afresh. Writers wait for the few moments it takes, so no row
-- is written between the marking and the triggers; run again, it repairs every flag. A
-- row that finishes runs the trigger only when it was its key's head: one behind the
-- head leaves the head where it is (migrations/0011 says why nothing is missed); and not
-- while the store's batch completion writes it, which moves its keys' heads itself in one
-- statement (migrations/0012).
LOCK TABLE {table} IN SHARE ROW EXCLUSIVE MODE;
DROP TRIGGER IF EXISTS {name}_heads_after_insert ON {table};
DROP TRIGGER IF EXISTS {name}_heads_after_status ON {table};
DROP TRIGGER IF EXISTS {name}_heads_after_delete ON {table};
UPDATE {table} SET is_head = false WHERE is_head;
UPDATE {table} AS t
SET is_head = true
FROM (SELECT DISTINCT ON (partition_key) id
      FROM {table}
      WHERE partition_key IS NOT NULL AND status NOT IN (1, 5)
      ORDER BY partition_key, created_at, id) AS h
WHERE t.id = h.id;
CREATE TRIGGER {name}_heads_after_insert AFTER INSERT ON {table}
    FOR EACH ROW WHEN (NEW.partition_key IS NOT NULL AND NEW.status NOT IN (1, 5))
    EXECUTE FUNCTION {schema_prefix}"{name}_keep_heads"();
CREATE TRIGGER {name}_heads_after_status AFTER UPDATE OF status ON {table}
    FOR EACH ROW WHEN (NEW.partition_key IS NOT NULL
                       AND (OLD.status IN (1, 5)) IS DISTINCT FROM (NEW.status IN (1, 5))
                       AND ((OLD.is_head
                             AND current_setting('outbox.completion_moves_heads', true)
                                 IS DISTINCT FROM 'on')
                            OR NEW.status NOT IN (1, 5)))
    EXECUTE FUNCTION {schema_prefix}"{name}_keep_heads"();
CREATE TRIGGER {name}_heads_after_delete AFTER DELETE ON {table}
    FOR EACH ROW WHEN (OLD.partition_key IS NOT NULL AND OLD.is_head
                       AND OLD.status NOT IN (1, 5))
    EXECUTE FUNCTION {schema_prefix}"{name}_keep_heads"();
