DROP FUNCTION IF EXISTS {schema_prefix}"{name}_claim"(
    timestamptz, text, bigint, text, bigint, boolean, boolean);
