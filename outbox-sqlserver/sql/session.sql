-- Run once on every pooled connection before its first use.
-- The SET options filtered indexes require (an INSERT or UPDATE under other settings
-- fails with error 1934), XACT_ABORT so a failed statement rolls its transaction back
-- instead of leaving it open, READ COMMITTED (READPAST is refused under SNAPSHOT and
-- SERIALIZABLE), and a lock timeout so a blocked statement fails instead of hanging.
SET ANSI_NULLS ON;
SET ANSI_PADDING ON;
SET ANSI_WARNINGS ON;
SET ARITHABORT ON;
SET CONCAT_NULL_YIELDS_NULL ON;
SET QUOTED_IDENTIFIER ON;
SET NUMERIC_ROUNDABORT OFF;
SET XACT_ABORT ON;
SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
SET LOCK_TIMEOUT {lock_timeout_ms};
