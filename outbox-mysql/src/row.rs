//! Column encodings of the MariaDB / MySQL schema: times as DATETIME(6) in UTC, uuids as
//! 16-byte binary strings, headers as JSON text, statuses as small integer codes.

use chrono::{DateTime, NaiveDateTime, Utc};
use outbox_core::store_kit::rows::{self, ColumnRead, EntryColumns};
use outbox_core::{EntryId, OutboxEntry, OutboxError, Result};
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

/// A text column (see [`Columns::text`]).
pub(crate) fn text(row: &MySqlRow, id: &str, column: &'static str) -> Result<Option<String>> {
    Columns(row)
        .text(column)
        .map_err(|reason| corrupt(id, format!("{column}: {reason}")))
}

/// A time column (DATETIME(6), UTC).
pub(crate) fn time(row: &MySqlRow, id: &str, column: &str) -> Result<Option<DateTime<Utc>>> {
    let at: Option<NaiveDateTime> = get(row, id, column)?;
    Ok(at.map(|t| t.and_utc()))
}

/// The row's clustered key (the claim statements return it).
pub(crate) fn seq(row: &MySqlRow) -> Result<i64> {
    get(row, "?", "seq")
}

/// Reads one full row of the outbox table.
pub(crate) fn decode(row: &MySqlRow) -> Result<OutboxEntry> {
    rows::entry(&Columns(row))
}

/// The `clock_now` column of the statements that judge at the server's clock.
pub(crate) fn clock(row: &MySqlRow) -> Result<DateTime<Utc>> {
    rows::clock(&Columns(row))
}

/// Reads the id of a row.
pub(crate) fn decode_id(row: &MySqlRow) -> Result<EntryId> {
    rows::entry_id(&Columns(row))
}

/// How the MariaDB schema stores each kind of column.
struct Columns<'r>(&'r MySqlRow);

impl Columns<'_> {
    fn read<'r, T: sqlx::Decode<'r, sqlx::MySql> + sqlx::Type<sqlx::MySql>>(
        &'r self,
        column: &str,
    ) -> ColumnRead<T> {
        self.0.try_get(column).map_err(|e| e.to_string())
    }
}

impl EntryColumns for Columns<'_> {
    /// Text compares byte by byte (`utf8mb4_bin`), which the server reports with the
    /// binary flag, so the bytes are read and checked as UTF-8 here.
    fn text(&self, column: &'static str) -> ColumnRead<String> {
        self.bytes(column)?
            .map(|b| String::from_utf8(b).map_err(|_| "not UTF-8".to_owned()))
            .transpose()
    }
    fn bytes(&self, column: &'static str) -> ColumnRead<Vec<u8>> {
        self.read(column)
    }
    fn time(&self, column: &'static str) -> ColumnRead<DateTime<Utc>> {
        Ok(self.read::<NaiveDateTime>(column)?.map(|t| t.and_utc()))
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
