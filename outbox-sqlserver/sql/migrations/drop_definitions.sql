DROP TABLE IF EXISTS {schema_prefix}[{name}_definitions];
