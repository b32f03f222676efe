-- Per-key order and disjoint slices (claims with `ordered` and `slice`).
--
-- slice_hash: the row's slice hash (outbox_core::slice_hash: 32-bit FNV-1a of the
-- partition key's UTF-8 bytes, or of the id's 16 bytes without a key), written with the
-- row by this crate's writers. Rows written before this migration, or by the host's own
-- SQL, have NULL here and the claim computes theirs with the function below, so adding
-- the column rewrites nothing.
ALTER TABLE {table} ADD slice_hash bigint NULL
    CONSTRAINT [{name}_slice_hash_ck] CHECK (slice_hash BETWEEN 0 AND 4294967295);

-- key_hash: partition_key is nvarchar(max), which no index can have as a key, so the key
-- index is on its SHA-256 instead (a computed column, not persisted: adding it is a change
-- of metadata only, and the index keeps the values). The claim compares the keys too.
ALTER TABLE {table} ADD key_hash AS CAST(HASHBYTES('SHA2_256', partition_key) AS binary(32));

-- A key's rows in creation order, with what the ordered claim judges them by: one seek
-- finds whether a row has an older row of its key not yet delivered or dead-lettered, or
-- a row of its key holding a live lease.
CREATE INDEX [{name}_key_ix] ON {table} (key_hash, created_at, id)
    INCLUDE (status, claim_expires_at);

-- The slice hash of a key, or of an id when the key is NULL. The key's UTF-8 bytes are
-- made from its UTF-16 code units (read under a binary collation, so a supplementary
-- character is two units, whatever the database's collation) and fed to FNV-1a as they
-- are made; XOR is `^`. CREATE FUNCTION must open its batch, and the migrations run as one
-- batch, hence EXEC.
EXEC (N'
CREATE FUNCTION {schema_prefix}[{name}_slice_hash] (@key nvarchar(max), @id binary(16))
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
');
