-- A claim's per-key order condition on row t at clock.clock_now: a keyed row is a
-- candidate only while no row of its key not yet delivered or dead-lettered is older, or
-- holds a live lease. Left out of the statements that claim unordered.
  AND (partition_key IS NULL OR NOT EXISTS (
      SELECT 1 FROM {table} AS k
      WHERE k.partition_key = t.partition_key
        AND k.status NOT IN (1, 5)
        AND (k.created_at < t.created_at
             OR (k.created_at = t.created_at AND k.id < t.id)
             OR k.claim_expires_at > clock.clock_now)))