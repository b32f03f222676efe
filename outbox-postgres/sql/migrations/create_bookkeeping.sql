-- The applied migrations of one outbox table: each one's checksum, and the oldest store
-- version that runs on the schema it left (NULL where a release before compatibility
-- windows recorded it).
CREATE TABLE IF NOT EXISTS {schema_prefix}"{name}_migrations" (
    version           bigint      PRIMARY KEY,
    name              text        NOT NULL,
    applied_at        timestamptz NOT NULL DEFAULT now(),
    oldest_compatible bigint,
    checksum          text
);
