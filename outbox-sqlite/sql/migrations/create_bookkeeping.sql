-- The applied migrations of one outbox table: each one's checksum, and the oldest store
-- version that runs on the schema it left (NULL where a release before compatibility
-- windows recorded it).
CREATE TABLE IF NOT EXISTS {schema_prefix}{name}_migrations (
    version           INTEGER NOT NULL PRIMARY KEY,
    name              TEXT    NOT NULL,
    applied_at        INTEGER NOT NULL,
    oldest_compatible INTEGER,
    checksum          TEXT
) STRICT;
