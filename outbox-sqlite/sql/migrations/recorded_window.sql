-- The schema's version, and the oldest store version that runs on it: a migration
-- recorded without a bound runs only the stores of its own version.
SELECT max(version), max(COALESCE(oldest_compatible, version))
FROM {schema_prefix}{name}_migrations
