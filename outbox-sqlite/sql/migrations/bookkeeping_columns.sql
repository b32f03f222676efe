-- How many of the columns a release before compatibility windows did not make the
-- bookkeeping table with it has (0 or 2; 0 when there is no such table).
SELECT count(*), NULL
FROM {schema_prefix}pragma_table_info('{name}_migrations')
WHERE name IN ('oldest_compatible', 'checksum')
