INSERT INTO {table} (id, customer, total_cents) VALUES ($1, $2, $3)
