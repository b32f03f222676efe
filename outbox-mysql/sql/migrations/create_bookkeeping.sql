-- The applied migrations of one outbox table: each one's checksum, and the oldest store
-- version that runs on the schema it left (NULL where a release before compatibility
-- windows recorded it).
CREATE TABLE IF NOT EXISTS {schema_prefix}`{name}_migrations` (
    version           BIGINT       NOT NULL PRIMARY KEY,
    name              VARCHAR(255) NOT NULL,
    applied_at        DATETIME(6)  NOT NULL DEFAULT UTC_TIMESTAMP(6),
    oldest_compatible BIGINT       NULL,
    checksum          VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_general_ci NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin
