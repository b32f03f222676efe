ALTER TABLE {migrations} ADD oldest_compatible bigint NULL;
ALTER TABLE {migrations} ADD checksum nvarchar(64) NULL;
