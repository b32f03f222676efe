-- The slice and key-order conditions of a claim's candidate query, on row t at
-- clock.clock_now (see claim_pending_candidates.sql for the parameters).
  AND (? = 0 OR slice_hash IS NULL OR slice_hash % ? = ?)
  AND (? = 0 OR partition_key IS NULL OR NOT EXISTS (
      SELECT 1 FROM {table} AS k
      WHERE k.partition_key = t.partition_key
        AND k.status NOT IN (1, 5)
        AND (k.created_at < t.created_at
             OR (k.created_at = t.created_at AND k.id < t.id)
             OR k.claim_expires_at > clock.clock_now)))