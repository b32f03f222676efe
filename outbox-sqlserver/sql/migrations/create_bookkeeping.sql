-- The applied migrations of one outbox table: each one's checksum, and the oldest store
-- version that runs on the schema it left (NULL where a release before compatibility
-- windows recorded it).
IF OBJECT_ID(N'{migrations_object}', N'U') IS NULL
    CREATE TABLE {migrations} (
        version           bigint        NOT NULL PRIMARY KEY,
        name              nvarchar(200) NOT NULL,
        applied_at        datetime2(6)  NOT NULL DEFAULT SYSUTCDATETIME(),
        oldest_compatible bigint        NULL,
        checksum          nvarchar(64)  NULL
    );
