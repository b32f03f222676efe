-- How many of the columns a release before compatibility windows did not make the
-- bookkeeping table with it has (0 or 2; 0 when there is no such table). The schema is
-- the table's (rendered quoted, so unquoted here), or the connection's database.
SELECT CAST(COUNT(*) AS SIGNED), CAST(NULL AS SIGNED)
FROM information_schema.columns
WHERE table_schema = COALESCE(NULLIF(REPLACE('{schema}', '`', ''), ''), DATABASE())
  AND table_name = '{name}_migrations'
  AND column_name IN ('oldest_compatible', 'checksum')
