-- Prepares the table for claims in per-key order (`enable_ordered_claims`, `outbox migrate
-- --ordered`), in one write transaction, and again harmlessly.
--
-- Each row with a partition key knows whether it is its key's head, the oldest row of the
-- key (by created_at, then id) not yet delivered or dead-lettered. An ordered claim walks
-- an index of heads and keyless rows only, so a key with a long backlog costs one index
-- entry, not its whole backlog, and a claim's cost stays bounded by the batch and the
-- leases it steps over, as the unordered claim's is. Triggers keep the flag, so every
-- writer (the store, the host's writer, the portable store, an operator's UPDATE) keeps
-- it right without knowing of it: an insert, a status that crosses between terminal and
-- not (a delivery, a dead letter, a requeue), and a delete each recompute the head of
-- that one key: two seeks in the key index, and a write only where the head moved.
--
-- None of this is in the migrations: the walk indexes hold every keyless row too (bulk
-- enqueue of 64 B entries measured at 0.83x with them), and the triggers and key indexes
-- cost every keyed row. Tables drained unordered do without any of it.

-- What an ordered claim (claim_ordered.sql) walks: pending heads and keyless rows, and the
-- same of retries.
CREATE INDEX IF NOT EXISTS {schema_prefix}{name}_ordered_pending_idx ON {name} (created_at, id)
    WHERE status = 0 AND (partition_key IS NULL OR is_head = 1);
CREATE INDEX IF NOT EXISTS {schema_prefix}{name}_ordered_retry_idx
    ON {name} (coalesce(next_retry_at, updated_at), id)
    WHERE status IN (2, 4) AND (partition_key IS NULL OR is_head = 1);

-- A key's rows not yet terminal, in key order: where each key's head is found.
CREATE INDEX IF NOT EXISTS {schema_prefix}{name}_key_order_idx ON {name} (partition_key, created_at, id)
    WHERE partition_key IS NOT NULL AND status NOT IN (1, 5);
-- The current heads, one per key with work: where the previous head is found. A row that
-- turned terminal keeps whatever flag it had (no index that matters holds it, and clearing
-- it would write the delivered row a second time), so only rows not yet terminal count.
CREATE INDEX IF NOT EXISTS {schema_prefix}{name}_key_head_idx ON {name} (partition_key)
    WHERE is_head = 1 AND status NOT IN (1, 5);
-- Keys with a lease on one of their rows (claim fields are cleared on every completion).
CREATE INDEX IF NOT EXISTS {schema_prefix}{name}_key_lease_idx ON {name} (partition_key, claim_expires_at)
    WHERE partition_key IS NOT NULL AND claim_expires_at IS NOT NULL;

-- The heads of the rows already there (marked afresh: enabling again repairs any flag).
UPDATE {table} SET is_head = 0 WHERE is_head = 1;
UPDATE {table} SET is_head = 1
WHERE rowid IN (
    SELECT (SELECT h.rowid FROM {table} AS h
            WHERE h.partition_key = k.partition_key AND h.status NOT IN (1, 5)
            ORDER BY h.created_at, h.id LIMIT 1)
    FROM (SELECT DISTINCT partition_key FROM {table}
          WHERE partition_key IS NOT NULL AND status NOT IN (1, 5)) AS k
);

CREATE TRIGGER IF NOT EXISTS {schema_prefix}{name}_head_after_insert AFTER INSERT ON {name}
WHEN NEW.partition_key IS NOT NULL AND NEW.status NOT IN (1, 5)
BEGIN
    UPDATE {name} SET is_head = 0
    WHERE partition_key = NEW.partition_key AND is_head = 1 AND status NOT IN (1, 5)
      AND rowid IS NOT (SELECT h.rowid FROM {name} AS h
                        WHERE h.partition_key = NEW.partition_key AND h.status NOT IN (1, 5)
                        ORDER BY h.created_at, h.id LIMIT 1);
    UPDATE {name} SET is_head = 1
    WHERE is_head = 0
      AND rowid = (SELECT h.rowid FROM {name} AS h
                   WHERE h.partition_key = NEW.partition_key AND h.status NOT IN (1, 5)
                   ORDER BY h.created_at, h.id LIMIT 1);
END;

-- A status that crosses between terminal and not: a row that turns unfinished again (a
-- requeue), or a head that finishes by a writer that leaves its flag set (the host, an
-- operator, the portable store, a store of an earlier release). A row behind its key's
-- head leaves the head where it is when it finishes, and this store's own completion
-- clears the flag of every row it finishes and moves the heads of the batch in one
-- statement afterwards (sql/complete_batch.sql, sql/move_heads.sql), so neither runs the
-- trigger. Replaced when the table is prepared again: tables prepared by an earlier
-- release have a trigger that runs for every row that finishes.
DROP TRIGGER IF EXISTS {schema_prefix}{name}_head_after_status;
CREATE TRIGGER {schema_prefix}{name}_head_after_status AFTER UPDATE OF status ON {name}
WHEN NEW.partition_key IS NOT NULL AND (OLD.status IN (1, 5)) IS NOT (NEW.status IN (1, 5))
     AND (NEW.status NOT IN (1, 5) OR (OLD.is_head = 1 AND NEW.is_head = 1))
BEGIN
    UPDATE {name} SET is_head = 0
    WHERE partition_key = NEW.partition_key AND is_head = 1 AND status NOT IN (1, 5)
      AND rowid IS NOT (SELECT h.rowid FROM {name} AS h
                        WHERE h.partition_key = NEW.partition_key AND h.status NOT IN (1, 5)
                        ORDER BY h.created_at, h.id LIMIT 1);
    UPDATE {name} SET is_head = 1
    WHERE is_head = 0
      AND rowid = (SELECT h.rowid FROM {name} AS h
                   WHERE h.partition_key = NEW.partition_key AND h.status NOT IN (1, 5)
                   ORDER BY h.created_at, h.id LIMIT 1);
END;

CREATE TRIGGER IF NOT EXISTS {schema_prefix}{name}_head_after_delete AFTER DELETE ON {name}
WHEN OLD.partition_key IS NOT NULL AND OLD.is_head = 1 AND OLD.status NOT IN (1, 5)
BEGIN
    UPDATE {name} SET is_head = 1
    WHERE is_head = 0
      AND rowid = (SELECT h.rowid FROM {name} AS h
                   WHERE h.partition_key = OLD.partition_key AND h.status NOT IN (1, 5)
                   ORDER BY h.created_at, h.id LIMIT 1);
END;
