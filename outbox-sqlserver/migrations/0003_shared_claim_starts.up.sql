-- Where the stores draining the table share where their claims start: a store that
-- starts, or is about to walk the pending index from its beginning, reads the newest view
-- another store shared instead of stepping over every ghost index row to learn it. Each
-- share is a new row, never an update of an old one, and the newest row of a kind is the
-- first a backward seek on the clustered key meets. A share prunes its kind's older rows
-- now and then (`starts_write.sql`). Claims of the previous release never touch the table.
CREATE TABLE {schema_prefix}[{name}_claim_starts] (
    seq          bigint           IDENTITY(1, 1) NOT NULL,
    kind         nvarchar(300)    COLLATE Latin1_General_100_BIN2 NOT NULL,
    sharer       uniqueidentifier NOT NULL,
    from_created datetime2(6)     NOT NULL,
    from_id      binary(16)       NOT NULL,
    full_at      datetime2(6)     NOT NULL,
    hold_back_us bigint           NOT NULL
        CONSTRAINT [{name}_claim_starts_hold_back_ck] CHECK (hold_back_us >= 0),
    CONSTRAINT [{name}_claim_starts_pk] PRIMARY KEY CLUSTERED (kind, seq)
);
