-- Records many claimed transitions in one statement, through the table's completion
-- function (definitions/complete_batch.sql: it writes the batch in id order, judging each
-- claim on the row it locks, with plans that never depend on the table's statistics).
-- Parameter arrays, one element per completion: $1 id, $2 owner, $3 token, $4 status,
-- $5 next_retry_at, $6 attempt_count, $7 last_error, $8 dead_letter_reason,
-- $9 delivered_at, $10 stamp delivered_at with the transition time,
-- $11 provider_message_id, $12 transition time (NULL: database clock), $13 the stamp the
-- write leaves. Every row of the batch the table has comes back once with `applied`; a
-- written row carries only the columns the write set, a refused one the whole durable
-- row as it is after the write.
SELECT *
FROM {schema_prefix}"{name}_complete_batch"(
    $1::uuid[], $2::text[], $3::uuid[], $4::smallint[], $5::timestamptz[], $6::integer[],
    $7::text[], $8::text[], $9::timestamptz[], $10::boolean[], $11::text[],
    $12::timestamptz[], $13::uuid[])
