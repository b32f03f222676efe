ALTER TABLE {schema_prefix}"{name}_migrations"
    ADD COLUMN IF NOT EXISTS oldest_compatible bigint,
    ADD COLUMN IF NOT EXISTS checksum text;
