-- Back to version 1's layout: the table rebuilt WITHOUT ROWID, with its rows and indexes.
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
) STRICT, WITHOUT ROWID;

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
