-- Whether the table was prepared for claims in per-key order: its two walk indexes exist
-- and are valid (a failed concurrent build leaves one invalid), and the trigger that keeps
-- the heads is there (created last, with the heads marked). $1, $2: the indexes'
-- qualified names; $3: the table's; $4: the trigger's name.
SELECT (SELECT count(*) FROM pg_index
        WHERE indisvalid AND indexrelid IN (to_regclass($1), to_regclass($2))) = 2
   AND EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = to_regclass($3) AND tgname = $4)
