-- Version, name, oldest compatible version, checksum and the time it was applied, bound
-- in that order: a new record, or the completion of one a release before checksums left.
INSERT INTO {schema_prefix}{name}_migrations
    (version, name, oldest_compatible, checksum, applied_at)
VALUES (?1, ?2, ?3, ?4, ?5)
ON CONFLICT (version) DO UPDATE
SET oldest_compatible = excluded.oldest_compatible, checksum = excluded.checksum
