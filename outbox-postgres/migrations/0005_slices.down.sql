-- Back to version 4: the seven-parameter claims only, no stored slice hash.
DROP FUNCTION IF EXISTS {schema_prefix}"{name}_claim_ordered"(
    timestamptz, text, bigint, text, bigint, boolean, boolean, bigint, bigint);
DROP FUNCTION IF EXISTS {schema_prefix}"{name}_claim"(
    timestamptz, text, bigint, text, bigint, boolean, boolean, bigint, bigint);
DROP FUNCTION IF EXISTS {schema_prefix}"{name}_slice_hash"(text, uuid);
ALTER TABLE {table} DROP COLUMN IF EXISTS slice_hash;
