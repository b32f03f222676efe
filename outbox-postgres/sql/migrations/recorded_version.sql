SELECT max(version) FROM {schema_prefix}"{name}_migrations"
