//! Column encodings of the SQLite schema: times as integer microseconds since the epoch,
//! UUIDs as 16-byte blobs, headers as JSON text, statuses as small integer codes.

use chrono::{DateTime, Utc};
use outbox_core::{EmissionStatus, EntryId, Headers, OutboxEntry, OutboxError, Result};
use sqlx::sqlite::SqliteRow;
use sqlx::Row;
use uuid::Uuid;

/// A time as stored: microseconds since the Unix epoch.
pub(crate) fn micros(at: DateTime<Utc>) -> i64 {
    at.timestamp_micros()
}

/// An optional time as stored.
pub(crate) fn opt_micros(at: Option<DateTime<Utc>>) -> Option<i64> {
    at.map(micros)
}

/// An entry id as stored (a 16-byte blob).
pub(crate) fn entry_id(bytes: &[u8]) -> Result<EntryId> {
    Uuid::from_slice(bytes)
        .map(EntryId::from)
        .map_err(|_| OutboxError::CorruptRow {
            id: "?".into(),
            reason: "id is not 16 bytes".into(),
        })
}

fn corrupt(id: &str, reason: impl Into<String>) -> OutboxError {
    OutboxError::CorruptRow {
        id: id.to_owned(),
        reason: reason.into(),
    }
}

fn time(id: &str, column: &str, v: i64) -> Result<DateTime<Utc>> {
    DateTime::from_timestamp_micros(v)
        .ok_or_else(|| corrupt(id, format!("{column} {v} is out of range")))
}

fn opt_time(id: &str, column: &str, v: Option<i64>) -> Result<Option<DateTime<Utc>>> {
    v.map(|v| time(id, column, v)).transpose()
}

fn uuid(id: &str, column: &str, bytes: &[u8]) -> Result<Uuid> {
    Uuid::from_slice(bytes).map_err(|_| corrupt(id, format!("{column} is not 16 bytes")))
}

fn count(id: &str, column: &str, v: i64) -> Result<u32> {
    u32::try_from(v).map_err(|_| corrupt(id, format!("{column} {v} is out of range")))
}

fn get<'r, T: sqlx::Decode<'r, sqlx::Sqlite> + sqlx::Type<sqlx::Sqlite>>(
    row: &'r SqliteRow,
    id: &str,
    column: &str,
) -> Result<T> {
    row.try_get(column)
        .map_err(|e| corrupt(id, format!("{column}: {e}")))
}

/// One group of `admin/topic_stats.sql`: a topic, a status code, a count, the oldest
/// creation time (µs).
pub(crate) fn topic_group(row: &SqliteRow) -> Result<outbox_core::store_kit::admin::TopicGroup> {
    let shown = "topic stats";
    outbox_core::store_kit::admin::TopicGroup::read(
        get(row, shown, "topic")?,
        get(row, shown, "status")?,
        get(row, shown, "n")?,
        opt_time(shown, "oldest", get(row, shown, "oldest")?)?,
    )
}

/// Reads one full row of the outbox table.
pub(crate) fn decode(row: &SqliteRow) -> Result<OutboxEntry> {
    let raw_id: Vec<u8> = get(row, "?", "id")?;
    let id_uuid = uuid("?", "id", &raw_id)?;
    let id = id_uuid.to_string();
    let id = id.as_str();
    let status_code: i64 = get(row, id, "status")?;
    let headers_json: String = get(row, id, "headers")?;
    let headers: Headers = serde_json::from_str(&headers_json)
        .map_err(|e| corrupt(id, format!("headers are not a JSON object of strings: {e}")))?;
    let token: Option<Vec<u8>> = get(row, id, "claim_token")?;
    let stamp: Vec<u8> = get(row, id, "stamp")?;
    Ok(OutboxEntry {
        id: EntryId::from_uuid(id_uuid),
        topic: get(row, id, "topic")?,
        partition_key: get(row, id, "partition_key")?,
        payload: get(row, id, "payload")?,
        headers,
        status: EmissionStatus::from_code(status_code)
            .ok_or_else(|| corrupt(id, format!("unknown status code {status_code}")))?,
        created_at: time(id, "created_at", get(row, id, "created_at")?)?,
        updated_at: time(id, "updated_at", get(row, id, "updated_at")?)?,
        not_before: opt_time(id, "not_before", get(row, id, "not_before")?)?,
        next_retry_at: opt_time(id, "next_retry_at", get(row, id, "next_retry_at")?)?,
        attempt_count: count(id, "attempt_count", get(row, id, "attempt_count")?)?,
        last_error: get(row, id, "last_error")?,
        dead_letter_reason: get(row, id, "dead_letter_reason")?,
        delivered_at: opt_time(id, "delivered_at", get(row, id, "delivered_at")?)?,
        provider_message_id: get(row, id, "provider_message_id")?,
        claim_owner: get(row, id, "claim_owner")?,
        claim_token: token.map(|t| uuid(id, "claim_token", &t)).transpose()?,
        claimed_at: opt_time(id, "claimed_at", get(row, id, "claimed_at")?)?,
        claim_expires_at: opt_time(id, "claim_expires_at", get(row, id, "claim_expires_at")?)?,
        claim_attempt_count: count(
            id,
            "claim_attempt_count",
            get(row, id, "claim_attempt_count")?,
        )?,
        stamp: uuid(id, "stamp", &stamp)?,
    })
}

/// The entry `id` as `get` (the table's `get.sql`) reads it on `conn`, if there is one.
pub(crate) async fn fetch(
    conn: &mut sqlx::SqliteConnection,
    get: &str,
    id: EntryId,
) -> Result<Option<OutboxEntry>> {
    sqlx::query(get)
        .bind(id.as_uuid().as_bytes().to_vec())
        .fetch_optional(conn)
        .await
        .map_err(crate::error::map_err)?
        .as_ref()
        .map(decode)
        .transpose()
}
