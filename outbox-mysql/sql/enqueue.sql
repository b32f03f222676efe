-- New entries in one statement: the VALUES list below is enqueue_row.sql once per entry,
-- separated by commas (writer.rs renders one statement per chunk length).
INSERT INTO {table} (id, topic, partition_key, payload, headers, status, created_at, updated_at,
                     not_before, attempt_count, claim_attempt_count, stamp, slice_hash)
VALUES
{rows}
