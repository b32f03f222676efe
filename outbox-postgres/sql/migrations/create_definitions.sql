-- The stored functions applied from definitions/, each with the checksum of the SQL it
-- was applied from: migrate applies a definition again when its file changed.
CREATE TABLE IF NOT EXISTS {schema_prefix}"{name}_definitions" (
    name       text        PRIMARY KEY,
    checksum   text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);
