-- The newest view of where each kind of claim starts, shared by the table's stores
-- (migration 7), read when a store is built. The walk from the beginning's age is taken
-- by the server's clock, as it was stored, so the stores' clocks need not agree.
SELECT DISTINCT ON (kind)
       kind,
       sharer,
       from_created,
       from_id,
       greatest((extract(epoch FROM clock_timestamp() - full_at) * 1000000)::bigint, 0)
           AS full_age_us,
       hold_back_us
FROM {schema_prefix}"{name}_claim_starts"
ORDER BY kind, seq DESC
