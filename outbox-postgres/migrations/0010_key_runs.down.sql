-- Back to version 9: no claim in key runs (the ordered claims of version 9 take heads).
DROP FUNCTION IF EXISTS {schema_prefix}"{name}_claim_runs"(
    timestamptz, text, bigint, text, bigint, boolean, boolean, bigint, bigint, bigint);
