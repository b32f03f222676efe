-- Claims through the table's claim function (definitions/claim.sql),
-- which takes the batch by an ordered index walk whatever the table's statistics say. $1
-- now (NULL: the database clock), $2 topic filter (NULL: every topic), $3 batch size, $4
-- owner, $5 lease in microseconds, $6 take retry-ready rows, $7 take pending rows
-- (retry-ready ones first), $8 and $9 the pending key the pending walk starts at (NULL:
-- the beginning of the index), $10 whether a walk that comes up short walks behind that
-- key too (see outbox_core::ClaimStarts). A claim of one slice adds $18 the slice count
-- and $19 its index and calls the twelve-argument function; a claim of every slice leaves
-- the line marked {slice_args} out and calls the ten-argument one, whose walks carry no
-- slice condition (measured: the condition alone cost a server-side loop of claims about
-- 15%).
--
-- $11 to $16 share where this store's claims start with the table's other stores, in
-- the same statement (migration 7; $11 NULL: nothing to share this time): $11 the kind,
-- $12 the store's id, $13 and $14 the oldest pending key its last claim took, $15 how
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
SELECT *
FROM {schema_prefix}"{name}_claim"($1::timestamptz, $2::text, $3::bigint, $4::text,
                                   $5::bigint, $6::boolean, $7::boolean,
                                   $8::timestamptz, $9::uuid, $10::boolean
                                   , $18::bigint, $19::bigint {slice_args}
                                   )
