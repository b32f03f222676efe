//! Column encodings of the SQLite schema: times as integer microseconds since the epoch,
//! UUIDs as 16-byte blobs, headers as JSON text, statuses as small integer codes.

use chrono::{DateTime, Utc};
use outbox_core::{EntryId, OutboxEntry, OutboxError, Result};
use sqlx::sqlite::SqliteRow;
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

/// Reads one full row of the outbox table.
pub(crate) fn decode(row: &SqliteRow) -> Result<OutboxEntry> {
    outbox_core::sqlite_format::decode_entry(row)
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
