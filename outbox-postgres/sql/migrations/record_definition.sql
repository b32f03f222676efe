-- Name and checksum, bound in that order.
INSERT INTO {schema_prefix}"{name}_definitions" (name, checksum)
VALUES ($1, $2)
ON CONFLICT (name) DO UPDATE SET checksum = EXCLUDED.checksum, applied_at = now()
