COPY {table} (id, topic, partition_key, payload, headers, status, created_at, updated_at,
              not_before, stamp, slice_hash)
FROM STDIN (FORMAT binary)
