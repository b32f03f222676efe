ALTER TABLE {schema_prefix}`{name}_migrations`
    ADD COLUMN oldest_compatible BIGINT NULL,
    ADD COLUMN checksum VARCHAR(64) CHARACTER SET ascii COLLATE ascii_general_ci NULL
