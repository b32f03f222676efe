-- The outbox table. Claim fields are columns, not a status: a claimed pending row is
-- still pending. Times are timestamptz (microseconds); ids, tokens and stamps are uuid.
CREATE TABLE {table} (
    id                  uuid        PRIMARY KEY,
    topic               text        NOT NULL,
    partition_key       text,
    payload             bytea       NOT NULL,
    headers             jsonb       NOT NULL DEFAULT '{}'::jsonb,
    status              smallint    NOT NULL DEFAULT 0 CHECK (status BETWEEN 0 AND 5),
    created_at          timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL,
    not_before          timestamptz,
    next_retry_at       timestamptz,
    attempt_count       integer     NOT NULL DEFAULT 0,
    last_error          text,
    dead_letter_reason  text,
    delivered_at        timestamptz,
    provider_message_id text,
    claim_owner         text,
    claim_token         uuid,
    claimed_at          timestamptz,
    claim_expires_at    timestamptz,
    claim_attempt_count integer     NOT NULL DEFAULT 0,
    stamp               uuid        NOT NULL
) WITH (fillfactor = 70);

-- Only claimable states are indexed, in claim order, so delivered and dead-lettered rows
-- never slow a claim down. Status codes: 0 pending, 1 delivered, 2 deferred, 3 failed,
-- 4 retryable failure, 5 dead-lettered.
CREATE INDEX {name}_pending_idx ON {table} (created_at, id) WHERE status = 0;
CREATE INDEX {name}_retry_idx ON {table} ((COALESCE(next_retry_at, updated_at)), id)
    WHERE status IN (2, 4);
-- Retention: prune walks delivered rows by delivery time.
CREATE INDEX {name}_delivered_idx ON {table} (delivered_at) WHERE status = 1;
