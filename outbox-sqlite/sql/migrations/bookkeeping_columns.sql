-- How many of the columns a release before compatibility windows did not make the
-- bookkeeping table with it has (0 or 2; 0 when there is no such table). The schema
-- (an attached database; rendered quoted, so unquoted here) is the pragma's second
-- argument: a schema prefix on the pragma would still read main's table of that name.
SELECT count(*), NULL
FROM pragma_table_info('{name}_migrations', COALESCE(NULLIF(trim('{schema}', '"'), ''), 'main'))
WHERE name IN ('oldest_compatible', 'checksum')
