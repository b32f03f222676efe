-- The leading part of both claims (sql/claim.sql, sql/claim_ordered.sql): it shares
-- where this store's claims of one kind start with the table's other stores, in the same
-- statement (migration 7; $11 NULL: nothing to share this time). $11 the kind, $12 the
-- store's id, $13 and $14 the oldest pending key its last claim took, $15 how
-- many microseconds ago its last walk from the beginning started, $16 for how many
-- microseconds after its start that walk holds the next one back (zero unless it was
-- costly), and $17 whether the share also deletes its kind's rows made 256 or more shares
-- of the table before it (the store asks with its first share of a kind and every 64th
-- after; the newest row always stays). A share is a row added, never one updated.
WITH shared AS (
    INSERT INTO {schema_prefix}"{name}_claim_starts"
        (kind, sharer, from_created, from_id, full_at, hold_back_us)
    SELECT $11::text, $12::uuid, $13::timestamptz, $14::uuid,
           clock_timestamp() - $15::bigint * interval '1 microsecond', $16::bigint
    WHERE $11::text IS NOT NULL
    RETURNING seq, kind
),
pruned AS (
    DELETE FROM {schema_prefix}"{name}_claim_starts" AS old
    USING shared
    WHERE $17::boolean
      AND old.kind = shared.kind
      AND old.seq <= shared.seq - 256
)
