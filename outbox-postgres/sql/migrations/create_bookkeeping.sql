CREATE TABLE IF NOT EXISTS {schema_prefix}"{name}_migrations" (
    version    bigint      PRIMARY KEY,
    name       text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);
