//! Column encodings of the MariaDB / MySQL schema: times as DATETIME(6) in UTC, uuids as
//! 16-byte binary strings, headers as JSON text, statuses as small integer codes.

use chrono::{DateTime, NaiveDateTime, Utc};
use outbox_core::{EmissionStatus, EntryId, Headers, OutboxEntry, OutboxError, Result};
use sqlx::mysql::{MySqlConnection, MySqlRow};
use sqlx::Row;
use uuid::Uuid;

/// A uuid as the batch statements' JSON carries it (32 hex digits, `UNHEX` on the server).
pub(crate) fn hex(id: Uuid) -> String {
    id.simple().to_string()
}

/// A time as the batch statements' JSON carries it (UTC, microseconds), or nothing.
pub(crate) fn json_time(at: Option<DateTime<Utc>>) -> Option<String> {
    at.map(|t| t.format("%Y-%m-%d %H:%M:%S%.6f").to_string())
}

/// One group of `admin/topic_stats.sql`: a topic, a status code, a count, the oldest
/// creation time.
pub(crate) fn topic_group(row: &MySqlRow) -> Result<outbox_core::store_kit::admin::TopicGroup> {
    let shown = "topic stats";
    outbox_core::store_kit::admin::TopicGroup::read(
        text(row, shown, "topic")?.unwrap_or_default(),
        get(row, shown, "status")?,
        get(row, shown, "n")?,
        time(row, shown, "oldest")?,
    )
}

fn corrupt(id: &str, reason: impl Into<String>) -> OutboxError {
    OutboxError::CorruptRow {
        id: id.to_owned(),
        reason: reason.into(),
    }
}

fn get<'r, T: sqlx::Decode<'r, sqlx::MySql> + sqlx::Type<sqlx::MySql>>(
    row: &'r MySqlRow,
    id: &str,
    column: &str,
) -> Result<T> {
    row.try_get(column)
        .map_err(|e| corrupt(id, format!("{column}: {e}")))
}

/// A text column. The table compares text byte by byte (`utf8mb4_bin`), which the server
/// reports with the binary flag, so the bytes are read and checked as UTF-8 here.
pub(crate) fn text(row: &MySqlRow, id: &str, column: &str) -> Result<Option<String>> {
    let bytes: Option<Vec<u8>> = get(row, id, column)?;
    bytes
        .map(|b| String::from_utf8(b).map_err(|_| corrupt(id, format!("{column} is not UTF-8"))))
        .transpose()
}

fn required_text(row: &MySqlRow, id: &str, column: &str) -> Result<String> {
    text(row, id, column)?.ok_or_else(|| corrupt(id, format!("{column} is NULL")))
}

fn uuid(id: &str, column: &str, bytes: &[u8]) -> Result<Uuid> {
    Uuid::from_slice(bytes).map_err(|_| corrupt(id, format!("{column} is not 16 bytes")))
}

fn count(id: &str, column: &str, v: i64) -> Result<u32> {
    u32::try_from(v).map_err(|_| corrupt(id, format!("{column} {v} is out of range")))
}

/// A time column (DATETIME(6), UTC).
pub(crate) fn time(row: &MySqlRow, id: &str, column: &str) -> Result<Option<DateTime<Utc>>> {
    let at: Option<NaiveDateTime> = get(row, id, column)?;
    Ok(at.map(|t| t.and_utc()))
}

fn required_time(row: &MySqlRow, id: &str, column: &str) -> Result<DateTime<Utc>> {
    time(row, id, column)?.ok_or_else(|| corrupt(id, format!("{column} is NULL")))
}

/// The `clock_now` column of the statements that judge at the server's clock.
pub(crate) fn clock(row: &MySqlRow) -> Result<DateTime<Utc>> {
    required_time(row, "clock", "clock_now")
}

/// The row's clustered key (the claim statements return it).
pub(crate) fn seq(row: &MySqlRow) -> Result<i64> {
    get(row, "?", "seq")
}

/// Reads one full row of the outbox table.
pub(crate) fn decode(row: &MySqlRow) -> Result<OutboxEntry> {
    let raw_id: Vec<u8> = get(row, "?", "id")?;
    let id_uuid = uuid("?", "id", &raw_id)?;
    let id = id_uuid.to_string();
    let id = id.as_str();
    let status_code: i64 = get(row, id, "status")?;
    let headers_json = required_text(row, id, "headers")?;
    let headers: Headers = serde_json::from_str(&headers_json)
        .map_err(|e| corrupt(id, format!("headers are not a JSON object of strings: {e}")))?;
    let token: Option<Vec<u8>> = get(row, id, "claim_token")?;
    let stamp: Vec<u8> = get(row, id, "stamp")?;
    Ok(OutboxEntry {
        id: EntryId::from_uuid(id_uuid),
        topic: required_text(row, id, "topic")?,
        partition_key: text(row, id, "partition_key")?,
        payload: get(row, id, "payload")?,
        headers,
        status: EmissionStatus::from_code(status_code)
            .ok_or_else(|| corrupt(id, format!("unknown status code {status_code}")))?,
        created_at: required_time(row, id, "created_at")?,
        updated_at: required_time(row, id, "updated_at")?,
        not_before: time(row, id, "not_before")?,
        next_retry_at: time(row, id, "next_retry_at")?,
        attempt_count: count(id, "attempt_count", get(row, id, "attempt_count")?)?,
        last_error: text(row, id, "last_error")?,
        dead_letter_reason: text(row, id, "dead_letter_reason")?,
        delivered_at: time(row, id, "delivered_at")?,
        provider_message_id: text(row, id, "provider_message_id")?,
        claim_owner: text(row, id, "claim_owner")?,
        claim_token: token.map(|t| uuid(id, "claim_token", &t)).transpose()?,
        claimed_at: time(row, id, "claimed_at")?,
        claim_expires_at: time(row, id, "claim_expires_at")?,
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
    conn: &mut MySqlConnection,
    get: &str,
    id: EntryId,
) -> Result<Option<OutboxEntry>> {
    sqlx::query(get)
        .bind(id.as_uuid())
        .fetch_optional(conn)
        .await
        .map_err(crate::error::map_err)?
        .as_ref()
        .map(decode)
        .transpose()
}

/// The rows of `ids` as `get_many` (the table's `get_many.sql`) reads them on `conn`,
/// by id; ids with no row are absent.
pub(crate) async fn fetch_many(
    conn: &mut MySqlConnection,
    get_many: &str,
    ids: impl Iterator<Item = EntryId>,
) -> Result<std::collections::HashMap<EntryId, OutboxEntry>> {
    let ids: Vec<String> = ids.map(|id| hex(id.as_uuid())).collect();
    let ids = serde_json::to_string(&ids).map_err(|e| OutboxError::Database {
        message: format!("cannot write the ids as JSON: {e}"),
        source: None,
    })?;
    sqlx::query(get_many)
        .bind(ids)
        .fetch_all(conn)
        .await
        .map_err(crate::error::map_err)?
        .iter()
        .map(|row| decode(row).map(|e| (e.id, e)))
        .collect()
}
