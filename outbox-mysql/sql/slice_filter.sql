  AND t.slice_hash % ? = ?
