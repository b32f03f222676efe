-- The outbox table becomes an ordinary rowid table, rebuilt in place with its rows and
-- indexes. Version 1 kept it WITHOUT ROWID, where rows live in the primary key's b-tree:
-- there a row of more than about a quarter of a page (any entry with a payload near 1 KiB)
-- spills into an overflow page of its own, so every such entry took two pages and every
-- claim and completion wrote both. A rowid table keeps rows of a few KiB on one page; the
-- id stays the primary key, now a unique index beside the rows.
CREATE TABLE {schema_prefix}{name}_rebuild (
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
) STRICT;

INSERT INTO {schema_prefix}{name}_rebuild (
    id, topic, partition_key, payload, headers, status, created_at, updated_at,
    not_before, next_retry_at, attempt_count, last_error, dead_letter_reason,
    delivered_at, provider_message_id, claim_owner, claim_token, claimed_at,
    claim_expires_at, claim_attempt_count, stamp
)
SELECT
    id, topic, partition_key, payload, headers, status, created_at, updated_at,
    not_before, next_retry_at, attempt_count, last_error, dead_letter_reason,
    delivered_at, provider_message_id, claim_owner, claim_token, claimed_at,
    claim_expires_at, claim_attempt_count, stamp
FROM {table};

DROP TABLE {table};

ALTER TABLE {schema_prefix}{name}_rebuild RENAME TO {name};

CREATE INDEX {schema_prefix}{name}_pending_idx ON {name} (created_at, id) WHERE status = 0;
CREATE INDEX {schema_prefix}{name}_retry_idx ON {name} (coalesce(next_retry_at, updated_at), id)
    WHERE status IN (2, 4);
CREATE INDEX {schema_prefix}{name}_delivered_idx ON {name} (delivered_at) WHERE status = 1;
