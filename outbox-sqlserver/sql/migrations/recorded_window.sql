-- The schema's version, and the oldest store version that runs on it: a migration
-- recorded without a bound runs only the stores of its own version.
SELECT MAX(version) AS version,
       MAX(COALESCE(oldest_compatible, version)) AS oldest_compatible
FROM {migrations};
