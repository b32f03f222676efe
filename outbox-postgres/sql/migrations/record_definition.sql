-- Name, revision and checksum, bound in that order.
INSERT INTO {schema_prefix}"{name}_definitions" (name, revision, checksum)
VALUES ($1, $2, $3)
ON CONFLICT (name) DO UPDATE
SET revision = EXCLUDED.revision, checksum = EXCLUDED.checksum, applied_at = now()
