-- How many of the two indexes an ordered claim walks exist and are valid (an index whose
-- concurrent build failed is left invalid). $1, $2: their qualified names.
SELECT count(*) FROM pg_index WHERE indisvalid AND indexrelid IN (to_regclass($1), to_regclass($2))
