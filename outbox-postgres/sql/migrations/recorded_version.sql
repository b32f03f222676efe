SELECT max(version), NULL::bigint FROM {schema_prefix}"{name}_migrations"
