-- Back to version 1: no key index, key hash, slice hash or its function.
DROP FUNCTION IF EXISTS {schema_prefix}[{name}_slice_hash];
DROP INDEX IF EXISTS [{name}_key_ix] ON {table};
ALTER TABLE {table} DROP COLUMN IF EXISTS key_hash;
ALTER TABLE {table} DROP CONSTRAINT IF EXISTS [{name}_slice_hash_ck];
ALTER TABLE {table} DROP COLUMN IF EXISTS slice_hash;
