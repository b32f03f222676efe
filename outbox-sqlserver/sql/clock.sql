-- The server's clock, as the store stamps rows with it.
SELECT CAST(SYSUTCDATETIME() AS datetime2(6)) AS now;
