  AND (t.partition_key IS NULL OR (
      -- Row t is its key's head: the first row of each of the key's unfinished statuses
      -- (one seek each in the key index, read from the index alone) is t or after it. The
      -- keys compare as text: the time's fixed-width form, then the id's bytes. A head
      -- under a live lease is not claimed (the walk's own lease condition), and neither
      -- is one whose key's first other pending row is leased (the last seek): that is
      -- where a key's leased rows begin when its head is not one of them (a run's rest
      -- being released, a late row older than the leased head).
      COALESCE((SELECT CONCAT(k.created_at, k.id) FROM {table} AS k FORCE INDEX ({name}_key)
                WHERE k.partition_key = t.partition_key AND k.status = 0
                ORDER BY k.created_at, k.id LIMIT 1) >= CONCAT(t.created_at, t.id), TRUE)
      AND COALESCE((SELECT CONCAT(k.created_at, k.id) FROM {table} AS k FORCE INDEX ({name}_key)
                    WHERE k.partition_key = t.partition_key AND k.status = 2
                    ORDER BY k.created_at, k.id LIMIT 1) >= CONCAT(t.created_at, t.id), TRUE)
      AND COALESCE((SELECT CONCAT(k.created_at, k.id) FROM {table} AS k FORCE INDEX ({name}_key)
                    WHERE k.partition_key = t.partition_key AND k.status = 3
                    ORDER BY k.created_at, k.id LIMIT 1) >= CONCAT(t.created_at, t.id), TRUE)
      AND COALESCE((SELECT CONCAT(k.created_at, k.id) FROM {table} AS k FORCE INDEX ({name}_key)
                    WHERE k.partition_key = t.partition_key AND k.status = 4
                    ORDER BY k.created_at, k.id LIMIT 1) >= CONCAT(t.created_at, t.id), TRUE)
      AND COALESCE((SELECT k.claim_expires_at FROM {table} AS k FORCE INDEX ({name}_key)
                    WHERE k.partition_key = t.partition_key AND k.status = 0
                      AND k.seq <> t.seq
                    ORDER BY k.created_at, k.id LIMIT 1) <= p.clock_now, TRUE)))
