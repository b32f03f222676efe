-- The newest view of where each kind of claim starts, shared by the table's stores
-- (migration 3), read when a store is built. The walk from the beginning's age is taken
-- by the server's clock, as it was stored, so the stores' clocks need not agree.
SET NOCOUNT ON;
SELECT s.kind,
       s.sharer,
       s.from_created,
       s.from_id,
       IIF(s.full_at > SYSUTCDATETIME(), CAST(0 AS bigint),
           DATEDIFF_BIG(microsecond, s.full_at, SYSUTCDATETIME())) AS full_age_us,
       s.hold_back_us
FROM (
    SELECT c.*, ROW_NUMBER() OVER (PARTITION BY c.kind ORDER BY c.seq DESC) AS newest
    FROM {schema_prefix}[{name}_claim_starts] AS c
) AS s
WHERE s.newest = 1;
