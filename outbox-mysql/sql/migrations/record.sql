INSERT INTO {schema_prefix}`{name}_migrations` (version, name) VALUES (?, ?)
