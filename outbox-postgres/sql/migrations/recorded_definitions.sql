SELECT name, revision, checksum FROM {schema_prefix}"{name}_definitions" ORDER BY name
