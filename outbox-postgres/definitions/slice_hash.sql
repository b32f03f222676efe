-- The slice hash of a partition key, or of the id when the key is NULL: 32-bit FNV-1a, as
-- outbox_core::slice_hash computes it (XOR is `#`). Sliced claims and finds compute it for
-- rows written without one (sql/find_pending.sql, the claims below). Its column came with
-- migration 0005.

CREATE OR REPLACE FUNCTION {schema_prefix}"{name}_slice_hash"(p_key text, p_id uuid)
RETURNS bigint
LANGUAGE plpgsql
IMMUTABLE
PARALLEL SAFE
AS $hash$
DECLARE
    bytes bytea := COALESCE(convert_to(p_key, 'UTF8'), uuid_send(p_id));
    h bigint := 2166136261;
BEGIN
    FOR i IN 0 .. length(bytes) - 1 LOOP
        h := ((h # get_byte(bytes, i)) * 16777619) & 4294967295;
    END LOOP;
    RETURN h;
END
$hash$;
