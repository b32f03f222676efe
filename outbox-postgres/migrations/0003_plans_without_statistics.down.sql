DROP FUNCTION IF EXISTS {schema_prefix}"{name}_renew"(
    uuid[], text[], uuid[], timestamptz, bigint);
DROP FUNCTION IF EXISTS {schema_prefix}"{name}_complete_batch"(
    uuid[], text[], uuid[], smallint[], timestamptz[], integer[], text[], text[],
    timestamptz[], boolean[], text[], timestamptz[], uuid[]);
ALTER FUNCTION {schema_prefix}"{name}_claim"(
    timestamptz, text, bigint, text, bigint, boolean, boolean)
    RESET enable_hashjoin
    RESET enable_mergejoin
    RESET jit;
