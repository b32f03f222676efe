-- The outbox table. Claim fields are columns, not a status: a claimed pending row is
-- still pending. Times are integer microseconds since the Unix epoch (UTC), which sort
-- and compare exactly; ids, tokens and stamps are 16-byte UUID blobs.
CREATE TABLE {table} (
    id                  BLOB    NOT NULL PRIMARY KEY CHECK (length(id) = 16),
    topic               TEXT    NOT NULL,
    partition_key       TEXT,
    payload             BLOB    NOT NULL,
    headers             TEXT    NOT NULL DEFAULT '{}',
    status              INTEGER NOT NULL DEFAULT 0 CHECK (status BETWEEN 0 AND 5),
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL,
    not_before          INTEGER,
    next_retry_at       INTEGER,
    attempt_count       INTEGER NOT NULL DEFAULT 0,
    last_error          TEXT,
    dead_letter_reason  TEXT,
    delivered_at        INTEGER,
    provider_message_id TEXT,
    claim_owner         TEXT,
    claim_token         BLOB,
    claimed_at          INTEGER,
    claim_expires_at    INTEGER,
    claim_attempt_count INTEGER NOT NULL DEFAULT 0,
    stamp               BLOB    NOT NULL
) STRICT, WITHOUT ROWID;

-- Only claimable states are indexed, in claim order. Status codes: 0 pending,
-- 1 delivered, 2 deferred, 3 failed, 4 retryable failure, 5 dead-lettered.
CREATE INDEX {schema_prefix}{name}_pending_idx ON {name} (created_at, id) WHERE status = 0;
CREATE INDEX {schema_prefix}{name}_retry_idx ON {name} (coalesce(next_retry_at, updated_at), id)
    WHERE status IN (2, 4);
CREATE INDEX {schema_prefix}{name}_delivered_idx ON {name} (delivered_at) WHERE status = 1;
