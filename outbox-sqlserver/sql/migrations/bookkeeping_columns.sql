-- How many of the columns a release before compatibility windows did not make the
-- bookkeeping table with it has (0 or 2; 0 when there is no such table).
SELECT CAST(CASE WHEN COL_LENGTH(N'{migrations_object}', 'oldest_compatible') IS NULL
                 THEN 0 ELSE 1 END
            + CASE WHEN COL_LENGTH(N'{migrations_object}', 'checksum') IS NULL
                   THEN 0 ELSE 1 END AS bigint) AS present,
       CAST(NULL AS bigint) AS unused;
