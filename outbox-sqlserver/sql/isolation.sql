-- What decides whether READPAST claims are safe on this connection: the session's
-- isolation level (1 read uncommitted, 2 read committed, 3 repeatable read, 4
-- serializable, 5 snapshot), whether the database reads committed data from row
-- versions (RCSI), and its compatibility level (OPENJSON needs 130).
SELECT s.transaction_isolation_level AS isolation_level,
       CAST(d.is_read_committed_snapshot_on AS int) AS read_committed_snapshot,
       CAST(d.compatibility_level AS int) AS compatibility_level,
       CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)) AS product_version
FROM sys.dm_exec_sessions AS s
CROSS JOIN sys.databases AS d
WHERE s.session_id = @@SPID
  AND d.database_id = DB_ID();
