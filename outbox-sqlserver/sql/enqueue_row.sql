(@id, @topic, @partition_key, @payload, @headers, 0, COALESCE(@created_at, @now), COALESCE(@created_at, @now), COALESCE(@created_at, @now), @not_before, 0, 0, @stamp, @slice_hash)
