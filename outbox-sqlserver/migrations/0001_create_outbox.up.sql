-- The outbox table. Claim fields are columns, not a status: a claimed pending row is
-- still pending. Times are UTC datetime2(6) (microseconds, like every other store).
--
-- Ids are binary(16) in RFC 4122 byte order, not uniqueidentifier: SQL Server compares
-- uniqueidentifier values by their last six bytes first, so ties in claim order would be
-- broken differently here than on every other engine. Tokens and stamps are only ever
-- compared for equality and stay uniqueidentifier (NEWID() makes them on the server).
--
-- The clustered key is an ever-increasing seq, so inserts append at the end of the table
-- instead of landing on random pages (a random uuid key splits pages and scatters the hot
-- rows every worker reads). The id is a nonclustered primary key.
--
-- Text compared with parameters is nvarchar: the driver sends strings as nvarchar, and a
-- varchar column would be converted row by row, turning a seek into a scan. Topics and
-- owners compare by code point (a binary collation), as on every other engine: the
-- database's default collation is usually case-insensitive, and "Orders" is not "orders".
-- `=` still ignores trailing spaces under any collation, so the statements compare their
-- lengths too.
CREATE TABLE {table} (
    seq                 bigint           IDENTITY(1, 1) NOT NULL,
    id                  binary(16)       NOT NULL,
    topic               nvarchar(255)    COLLATE Latin1_General_100_BIN2 NOT NULL,
    partition_key       nvarchar(max)    NULL,
    payload             varbinary(max)   NOT NULL,
    headers             nvarchar(max)    NOT NULL,
    status              tinyint          NOT NULL,
    created_at          datetime2(6)     NOT NULL,
    updated_at          datetime2(6)     NOT NULL,
    not_before          datetime2(6)     NULL,
    next_retry_at       datetime2(6)     NULL,
    -- COALESCE(next_retry_at, updated_at), the retry order. A stored column written by
    -- every statement that changes either, because a filtered index cannot be built on
    -- a computed column.
    retry_due_at        datetime2(6)     NOT NULL,
    attempt_count       int              NOT NULL,
    last_error          nvarchar(max)    NULL,
    dead_letter_reason  nvarchar(max)    NULL,
    delivered_at        datetime2(6)     NULL,
    provider_message_id nvarchar(max)    NULL,
    claim_owner         nvarchar(255)    COLLATE Latin1_General_100_BIN2 NULL,
    claim_token         uniqueidentifier NULL,
    claimed_at          datetime2(6)     NULL,
    claim_expires_at    datetime2(6)     NULL,
    claim_attempt_count int              NOT NULL,
    stamp               uniqueidentifier NOT NULL,
    CONSTRAINT [{name}_pk] PRIMARY KEY NONCLUSTERED (id),
    CONSTRAINT [{name}_status_ck] CHECK (status BETWEEN 0 AND 5)
);

CREATE UNIQUE CLUSTERED INDEX [{name}_seq_cx] ON {table} (seq);

-- Only claimable states are indexed, in claim order, so delivered and dead-lettered rows
-- never slow a claim down. The included columns let a claim judge eligibility on the
-- index row and look up only the rows it takes. Status codes: 0 pending, 1 delivered,
-- 2 deferred, 3 failed, 4 retryable failure, 5 dead-lettered.
CREATE INDEX [{name}_pending_ix] ON {table} (created_at, id)
    INCLUDE (not_before, claim_expires_at, topic)
    WHERE status = 0;
CREATE INDEX [{name}_retry_ix] ON {table} (retry_due_at, id)
    INCLUDE (claim_expires_at, topic)
    WHERE status IN (2, 4);
-- Retention: prune walks delivered rows by delivery time.
CREATE INDEX [{name}_delivered_ix] ON {table} (delivered_at)
    WHERE status = 1;
