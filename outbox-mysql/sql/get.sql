-- One row by id.
SELECT * FROM {table} WHERE id = ?
