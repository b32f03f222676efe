//! Reading outbox rows, by column name: whole rows (`t.*`), or the columns a completion wrote.

use chrono::{DateTime, Utc};
use outbox_core::store_kit::outcomes::GuardedRows;
use outbox_core::store_kit::rows::{self, ColumnCursor, ColumnRead, EntryColumns};
use outbox_core::{EntryId, Headers, OutboxEntry, OutboxError, Result};
use tokio_postgres::Row;
use uuid::Uuid;

/// Reads one outbox row.
pub(crate) fn entry(row: &Row) -> Result<OutboxEntry> {
    rows::entry(&Columns::of(row))
}

/// Reads a row a completion wrote (only the columns the write set; see [`rows::written`]).
pub(crate) fn written(row: &Row, claimed: &OutboxEntry) -> Result<OutboxEntry> {
    rows::written(&Columns::of(row), claimed)
}

/// How the PostgreSQL schema stores each kind of column: native uuids, `timestamptz`,
/// `jsonb` headers, a `smallint` status and `integer` counts.
///
/// Columns are found by name with a [`ColumnCursor`].
struct Columns<'r> {
    row: &'r Row,
    cursor: ColumnCursor,
}

impl<'r> Columns<'r> {
    fn of(row: &'r Row) -> Self {
        Self {
            row,
            cursor: ColumnCursor::new(),
        }
    }

    fn read<'a, T: tokio_postgres::types::FromSql<'a>>(&'a self, column: &str) -> ColumnRead<T> {
        let columns = self.row.columns();
        let index = self
            .cursor
            .find(column, columns.len(), |i| columns[i].name())?;
        self.row.try_get(index).map_err(|e| e.to_string())
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
        self.read(column)
    }
    fn code(&self, column: &'static str) -> ColumnRead<i64> {
        Ok(self.read::<i16>(column)?.map(i64::from))
    }
    fn count(&self, column: &'static str) -> ColumnRead<i64> {
        Ok(self.read::<i32>(column)?.map(i64::from))
    }
    fn uuid(&self, column: &'static str) -> ColumnRead<Uuid> {
        self.read(column)
    }
    fn headers(&self, column: &'static str) -> ColumnRead<Headers> {
        self.read::<serde_json::Value>(column)?
            .map(|v| serde_json::from_value(v).map_err(|e| format!("not a map of strings: {e}")))
            .transpose()
    }
}

/// How the rows of a guarded write (`complete_batch.sql`, `renew.sql`) are read: the
/// statements judge each target row on the row they lock, write it when the claim still
/// holds, and return every target row the table has once with its `applied` flag.
pub(crate) const GUARDED: GuardedRows<Row> = GuardedRows {
    id,
    applied,
    entry,
    written,
};

/// Reads the id of a returned row.
pub(crate) fn id(row: &Row) -> Result<EntryId> {
    rows::entry_id(&Columns::of(row))
}

/// Reads the `applied` flag the guarded writes add to each row they return.
pub(crate) fn applied(row: &Row) -> Result<bool> {
    get(row, "applied", "?")
}

/// One group of `admin/topic_stats.sql`: a topic, a status code, a count, the oldest
/// creation time.
pub(crate) fn topic_group(row: &Row) -> Result<outbox_core::store_kit::admin::TopicGroup> {
    let shown = "topic stats";
    outbox_core::store_kit::admin::TopicGroup::read(
        get(row, "topic", shown)?,
        get::<i16>(row, "status", shown)?.into(),
        get(row, "n", shown)?,
        get(row, "oldest", shown)?,
    )
}

fn get<'a, T: tokio_postgres::types::FromSql<'a>>(
    row: &'a Row,
    col: &'static str,
    id: &str,
) -> Result<T> {
    row.try_get(col)
        .map_err(|e| corrupt(id, format!("column {col}: {e}")))
}

fn corrupt(id: &str, reason: String) -> OutboxError {
    OutboxError::CorruptRow {
        id: id.to_owned(),
        reason,
    }
}
