-- The outbox table's schema version: NULL when no migration was ever applied.
IF OBJECT_ID(N'{migrations_object}', N'U') IS NULL
    SELECT CAST(NULL AS bigint) AS version, CAST(NULL AS bigint) AS unused;
ELSE
    SELECT MAX(version) AS version, CAST(NULL AS bigint) AS unused FROM {migrations};
