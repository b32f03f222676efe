-- The slice hash of a key, or of an id when the key is NULL: 32-bit FNV-1a, as
-- outbox_core::slice_hash computes it. The key's UTF-8 bytes are made from its UTF-16 code
-- units (read under a binary collation, so a supplementary character is two units,
-- whatever the database's collation); XOR is `^`. The claims call it for rows written
-- without a stored hash. Its columns came with migration 0002. CREATE OR ALTER FUNCTION
-- opens its own batch (SQL Server 2016 SP1 or later); in a printed script it is wrapped in
-- EXEC.
CREATE OR ALTER FUNCTION {schema_prefix}[{name}_slice_hash] (@key nvarchar(max), @id binary(16))
RETURNS bigint
WITH SCHEMABINDING
AS
BEGIN
    DECLARE @h bigint = 2166136261;
    DECLARE @i int = 1;
    DECLARE @n int;
    DECLARE @cp int;
    DECLARE @lo int;
    IF @key IS NULL
    BEGIN
        WHILE @i <= 16
        BEGIN
            SET @h = ((@h ^ CAST(SUBSTRING(@id, @i, 1) AS int)) * 16777619) & 4294967295;
            SET @i = @i + 1;
        END;
        RETURN @h;
    END;
    SET @n = DATALENGTH(@key) / 2;
    WHILE @i <= @n
    BEGIN
        SET @cp = UNICODE(SUBSTRING(@key COLLATE Latin1_General_100_BIN2, @i, 1));
        IF @cp BETWEEN 55296 AND 56319 AND @i < @n
        BEGIN
            SET @lo = UNICODE(SUBSTRING(@key COLLATE Latin1_General_100_BIN2, @i + 1, 1));
            IF @lo BETWEEN 56320 AND 57343
            BEGIN
                SET @cp = 65536 + (@cp - 55296) * 1024 + (@lo - 56320);
                SET @i = @i + 1;
            END;
        END;
        IF @cp < 128
            SET @h = ((@h ^ @cp) * 16777619) & 4294967295;
        ELSE IF @cp < 2048
        BEGIN
            SET @h = ((@h ^ (192 | (@cp / 64))) * 16777619) & 4294967295;
            SET @h = ((@h ^ (128 | (@cp & 63))) * 16777619) & 4294967295;
        END
        ELSE IF @cp < 65536
        BEGIN
            SET @h = ((@h ^ (224 | (@cp / 4096))) * 16777619) & 4294967295;
            SET @h = ((@h ^ (128 | ((@cp / 64) & 63))) * 16777619) & 4294967295;
            SET @h = ((@h ^ (128 | (@cp & 63))) * 16777619) & 4294967295;
        END
        ELSE
        BEGIN
            SET @h = ((@h ^ (240 | (@cp / 262144))) * 16777619) & 4294967295;
            SET @h = ((@h ^ (128 | ((@cp / 4096) & 63))) * 16777619) & 4294967295;
            SET @h = ((@h ^ (128 | ((@cp / 64) & 63))) * 16777619) & 4294967295;
            SET @h = ((@h ^ (128 | (@cp & 63))) * 16777619) & 4294967295;
        END;
        SET @i = @i + 1;
    END;
    RETURN @h;
END
