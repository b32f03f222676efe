-- Back to version 3: no stored slice hash.
ALTER TABLE {table} DROP COLUMN slice_hash;
