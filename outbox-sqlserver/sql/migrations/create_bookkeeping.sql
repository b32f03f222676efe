-- The applied migrations of one outbox table.
IF OBJECT_ID(N'{migrations_object}', N'U') IS NULL
    CREATE TABLE {migrations} (
        version    bigint        NOT NULL PRIMARY KEY,
        name       nvarchar(200) NOT NULL,
        applied_at datetime2(6)  NOT NULL DEFAULT SYSUTCDATETIME()
    );
