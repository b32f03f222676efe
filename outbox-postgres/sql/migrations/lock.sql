-- One lock per outbox table, held until the migrating transaction ends, so two hosts
-- migrating at once take turns.
SELECT pg_advisory_xact_lock(hashtext($1))
