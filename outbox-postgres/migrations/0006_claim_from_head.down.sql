-- Back to version 5: the claims that walk the pending index from its beginning only.
DROP FUNCTION IF EXISTS {schema_prefix}"{name}_dead_index_entries"();
DROP FUNCTION IF EXISTS {schema_prefix}"{name}_claim"(
    timestamptz, text, bigint, text, bigint, boolean, boolean, timestamptz, uuid, boolean,
    bigint, bigint);
DROP FUNCTION IF EXISTS {schema_prefix}"{name}_claim"(
    timestamptz, text, bigint, text, bigint, boolean, boolean, timestamptz, uuid, boolean);
