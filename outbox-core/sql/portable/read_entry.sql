-- One row by id, with the instant the caller works at (the request's, else the
-- database's clock) as an extra column, so a write that follows needs no clock query.
SELECT COALESCE(?, {now}) AS clock_now, {columns}
FROM {table}
WHERE id = ?
