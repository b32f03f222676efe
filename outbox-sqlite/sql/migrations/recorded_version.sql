SELECT max(version), NULL FROM {schema_prefix}{name}_migrations
