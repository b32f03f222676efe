-- Disjoint slices (claims with `slice`): each row's slice hash (outbox_core::slice_hash:
-- 32-bit FNV-1a of the partition key, or of the id without one), written with the row
-- by this crate's writers. Rows written before this migration, or by SQL of the host's
-- own that leaves it out, keep NULL here; sliced claims compute their hash in SQL
-- (sql/slice_hash.sql), so no row is rewritten now and every row has its slice.
ALTER TABLE {table} ADD COLUMN slice_hash INTEGER CHECK (slice_hash BETWEEN 0 AND 4294967295);
