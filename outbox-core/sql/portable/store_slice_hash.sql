-- A row's slice hash (outbox_core::slice_hash of its key, or of its id without one),
-- stored where it has none: a row written before the column existed, or by a host's own
-- SQL, that a sliced claim met outside its slice.
-- Parameters: the hash, the id.
UPDATE {table}
SET slice_hash = ?
WHERE id = ? AND slice_hash IS NULL
