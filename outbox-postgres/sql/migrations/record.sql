-- Version, name, oldest compatible version and checksum, bound in that order: a new
-- record, or the completion of one a release before checksums left.
INSERT INTO {schema_prefix}"{name}_migrations" (version, name, oldest_compatible, checksum)
VALUES ($1, $2, $3, $4)
ON CONFLICT (version) DO UPDATE
SET oldest_compatible = EXCLUDED.oldest_compatible, checksum = EXCLUDED.checksum
