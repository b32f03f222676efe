-- How many of the columns a release before compatibility windows did not make the
-- bookkeeping table with it has (0 or 2; 0 when there is no such table).
SELECT count(*)::bigint, NULL::bigint
FROM pg_attribute
WHERE attrelid = to_regclass('{schema_prefix}"{name}_migrations"')
  AND attname IN ('oldest_compatible', 'checksum')
  AND NOT attisdropped
