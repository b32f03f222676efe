-- The stored functions applied from definitions/, each with the revision and the checksum
-- of the SQL it was applied from: migrate applies a newer revision, and leaves a newer
-- release's alone.
CREATE TABLE IF NOT EXISTS {schema_prefix}"{name}_definitions" (
    name       text        PRIMARY KEY,
    revision   bigint      NOT NULL,
    checksum   text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);
