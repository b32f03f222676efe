-- The outbox table on InnoDB. Claim fields are columns, not a status: a claimed pending
-- row is still pending. Times are DATETIME(6) in UTC (microseconds); ids, tokens and
-- stamps are 16-byte binary uuids; headers are a JSON object as text. Status codes:
-- 0 pending, 1 delivered, 2 deferred, 3 failed, 4 retryable failure, 5 dead-lettered.
--
-- The clustered key is an increasing sequence, so new rows go to the end of the table
-- whatever their ids (a random uuid would split pages all over it), and the secondary
-- indexes reach a row through 8 bytes. Text compares byte by byte (utf8mb4_bin): topics,
-- keys and owners are matched exactly, as on the other engines.
CREATE TABLE {table} (
    seq                 BIGINT       NOT NULL AUTO_INCREMENT,
    id                  BINARY(16)   NOT NULL,
    topic               VARCHAR(255) NOT NULL,
    partition_key       VARCHAR(255) NULL,
    payload             LONGBLOB     NOT NULL,
    headers             LONGTEXT     NOT NULL,
    status              TINYINT      NOT NULL DEFAULT 0,
    created_at          DATETIME(6)  NOT NULL,
    updated_at          DATETIME(6)  NOT NULL,
    not_before          DATETIME(6)  NULL,
    next_retry_at       DATETIME(6)  NULL,
    attempt_count       BIGINT       NOT NULL DEFAULT 0,
    last_error          LONGTEXT     NULL,
    dead_letter_reason  LONGTEXT     NULL,
    delivered_at        DATETIME(6)  NULL,
    provider_message_id LONGTEXT     NULL,
    claim_owner         VARCHAR(255) NULL,
    claim_token         BINARY(16)   NULL,
    claimed_at          DATETIME(6)  NULL,
    claim_expires_at    DATETIME(6)  NULL,
    claim_attempt_count BIGINT       NOT NULL DEFAULT 0,
    stamp               BINARY(16)   NOT NULL,
    -- outbox_core::slice_hash of the row, written with it: slices split on it.
    slice_hash          BIGINT       NOT NULL,
    -- InnoDB has no partial indexes: this generated column holds a value only for
    -- retry-ready rows (when each is due: its retry time, or last update without one),
    -- so the retry walk never steps over the rest.
    retry_at            DATETIME(6)  AS (CASE WHEN status IN (2, 4)
                                              THEN COALESCE(next_retry_at, updated_at) END) STORED,
    PRIMARY KEY (seq),
    UNIQUE KEY {name}_id (id),
    -- Pending rows in claim order (status 0 is one range of it).
    KEY {name}_pending (status, created_at, id),
    -- Retry-ready rows in retry order; other rows hold NULL and sit before the range.
    KEY {name}_retry (retry_at, id),
    -- Retention: prune walks delivered rows by delivery time.
    KEY {name}_delivered (status, delivered_at),
    -- Per-key order: one key's rows by status, oldest first. A claim in key order looks
    -- up the key's rows that are not terminal (four short ranges of it).
    KEY {name}_key (partition_key, status, created_at, id),
    CONSTRAINT {name}_status CHECK (status BETWEEN 0 AND 5),
    CONSTRAINT {name}_headers CHECK (JSON_VALID(headers))
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
