-- The stored functions applied from definitions/, each with the revision and the checksum
-- of the SQL it was applied from: migrate applies a newer revision, and leaves a newer
-- release's alone.
IF OBJECT_ID(N'{schema_prefix}[{name}_definitions]', N'U') IS NULL
    CREATE TABLE {schema_prefix}[{name}_definitions] (
        name       nvarchar(200) NOT NULL PRIMARY KEY,
        revision   bigint        NOT NULL,
        checksum   nvarchar(64)  NOT NULL,
        applied_at datetime2(6)  NOT NULL DEFAULT SYSUTCDATETIME()
    );
