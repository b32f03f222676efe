INSERT INTO {schema_prefix}{name}_migrations (version, name, applied_at) VALUES (?1, ?2, ?3)
