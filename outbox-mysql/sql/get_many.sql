-- The rows of many ids at once. ? is a JSON array of ids as hex strings.
SELECT t.*
FROM JSON_TABLE(?, '$[*]' COLUMNS (id CHAR(32) PATH '$')) AS j
JOIN {table} AS t ON t.id = UNHEX(j.id)
