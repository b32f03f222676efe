-- One entry by id.
SELECT * FROM {table} WHERE id = $1::uuid
