//! Column encodings of the SQLite schema: times as integer microseconds since the epoch,
//! UUIDs as 16-byte blobs, headers as JSON text, statuses as small integer codes.

use chrono::{DateTime, Utc};
use outbox_core::store_kit::rows::{self, ColumnRead, EntryColumns};
use outbox_core::{EntryId, OutboxEntry, OutboxError, Result};
use sqlx::sqlite::SqliteRow;
use sqlx::Row;

/// A time as stored: microseconds since the Unix epoch.
pub(crate) fn micros(at: DateTime<Utc>) -> i64 {
    at.timestamp_micros()
}

/// A stored time read back, or why it cannot be one.
pub(crate) fn stored_time(v: i64) -> std::result::Result<DateTime<Utc>, String> {
    DateTime::from_timestamp_micros(v).ok_or_else(|| format!("{v} is out of range"))
}

/// An optional time as stored.
pub(crate) fn opt_micros(at: Option<DateTime<Utc>>) -> Option<i64> {
    at.map(micros)
}

/// An entry id as stored (a 16-byte blob).
pub(crate) fn entry_id(bytes: &[u8]) -> Result<EntryId> {
    rows::uuid_of(bytes)
        .map(EntryId::from)
        .map_err(|reason| corrupt("?", format!("id: {reason}")))
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
    rows::entry(&Columns(row))
}

/// The `clock_now` column of the statements that judge at the server's clock.
pub(crate) fn clock(row: &SqliteRow) -> Result<DateTime<Utc>> {
    rows::clock(&Columns(row))
}

/// Reads the id of a row.
pub(crate) fn decode_id(row: &SqliteRow) -> Result<EntryId> {
    rows::entry_id(&Columns(row))
}

/// How the SQLite schema stores each kind of column.
struct Columns<'r>(&'r SqliteRow);

impl Columns<'_> {
    fn read<'r, T: sqlx::Decode<'r, sqlx::Sqlite> + sqlx::Type<sqlx::Sqlite>>(
        &'r self,
        column: &str,
    ) -> ColumnRead<T> {
        self.0.try_get(column).map_err(|e| e.to_string())
    }
}

impl EntryColumns for Columns<'_> {
    fn text(&self, column: &'static str) -> ColumnRead<String> {
        self.read(column)
    }
    fn bytes(&self, column: &'static str) -> ColumnRead<Vec<u8>> {
        self.read(column)
    }
    fn time(&self, column: &'static str) -> ColumnRead<DateTime<Utc>> {
        self.read::<i64>(column)?.map(stored_time).transpose()
    }
    fn code(&self, column: &'static str) -> ColumnRead<i64> {
        self.read(column)
    }
    fn count(&self, column: &'static str) -> ColumnRead<i64> {
        self.read(column)
    }
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
