-- Where the stores draining the table share where their claims start (see migration
-- 0006): a store that starts, or is about to walk the pending index from its beginning,
-- reads the newest view another store shared instead of stepping over every dead index
-- entry to learn it. Each share is a new row, never an update of an old one: while a
-- snapshot is held, updates would leave a chain of versions that every read and write
-- steps through, where the newest row of a kind is the first entry a backward walk of the
-- primary key meets. A share prunes its kind's older rows now and then (the write's
-- statement). Claims of the previous release never touch the table.
CREATE TABLE {schema_prefix}"{name}_claim_starts" (
    seq bigint GENERATED ALWAYS AS IDENTITY,
    kind text NOT NULL,
    sharer uuid NOT NULL,
    from_created timestamptz NOT NULL,
    from_id uuid NOT NULL,
    full_at timestamptz NOT NULL,
    hold_back_us bigint NOT NULL CHECK (hold_back_us >= 0),
    PRIMARY KEY (kind, seq)
);
