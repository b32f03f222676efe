SELECT * FROM {table} WHERE id = ?1
