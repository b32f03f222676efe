SELECT CAST(MAX(version) AS SIGNED), CAST(NULL AS SIGNED) FROM {schema_prefix}`{name}_migrations`
