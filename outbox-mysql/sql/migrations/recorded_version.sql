SELECT CAST(MAX(version) AS SIGNED) FROM {schema_prefix}`{name}_migrations`
