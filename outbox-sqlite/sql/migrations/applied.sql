SELECT version, checksum FROM {schema_prefix}{name}_migrations ORDER BY version
