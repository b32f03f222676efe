  AND (t.partition_key IS NULL OR NOT EXISTS (
      SELECT 1 FROM {table} AS k FORCE INDEX ({name}_key)
      WHERE k.partition_key = t.partition_key
        AND k.status IN (0, 2, 3, 4)
        AND (k.created_at < t.created_at
             OR (k.created_at = t.created_at AND k.id < t.id)
             OR k.claim_expires_at > p.clock_now)))
