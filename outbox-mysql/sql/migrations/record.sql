-- Version, name, oldest compatible version and checksum, bound in that order: a new
-- record, or the completion of one a release before checksums left.
INSERT INTO {schema_prefix}`{name}_migrations` (version, name, oldest_compatible, checksum)
VALUES (?, ?, ?, ?)
ON DUPLICATE KEY UPDATE oldest_compatible = VALUES(oldest_compatible), checksum = VALUES(checksum)
