-- The schema's version, and the oldest store version that runs on it: a migration
-- recorded without a bound runs only the stores of its own version.
SELECT CAST(MAX(version) AS SIGNED), CAST(MAX(COALESCE(oldest_compatible, version)) AS SIGNED)
FROM {schema_prefix}`{name}_migrations`
