COPY {table} (id, topic, partition_key, payload, headers, status, created_at, updated_at,
              not_before, stamp)
FROM STDIN (FORMAT binary)
