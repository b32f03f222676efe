ALTER TABLE {schema_prefix}{name}_migrations ADD COLUMN oldest_compatible INTEGER;
ALTER TABLE {schema_prefix}{name}_migrations ADD COLUMN checksum TEXT;
