-- A claim's or find's slice condition on row t: its stored slice hash is in the slice
-- (parameters: the slice count, then its index), or it has none (its key decides, in
-- the store). Left out of the statements that take every slice.
  AND (slice_hash IS NULL OR slice_hash % ? = ?)