DELETE FROM {schema_prefix}"{name}_migrations" WHERE version = $1
