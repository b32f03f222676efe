CREATE TABLE IF NOT EXISTS {schema_prefix}{name}_migrations (
    version    INTEGER NOT NULL PRIMARY KEY,
    name       TEXT    NOT NULL,
    applied_at INTEGER NOT NULL
) STRICT;
