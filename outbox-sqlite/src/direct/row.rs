//! Rows read on the store's own connection: the same column encodings as [`crate::row`],
//! read through `rusqlite`.

use chrono::{DateTime, Utc};
use outbox_core::store_kit::rows::{self, ColumnCursor, ColumnRead, EntryColumns};
use outbox_core::{EntryId, OutboxEntry, Result};
use rusqlite::types::FromSql;
use rusqlite::{Connection, OptionalExtension, Row};

use crate::error::map_direct;
use crate::row::stored_time;

/// The column names of a statement's rows, read once per statement: rusqlite's lookup by
/// name asks SQLite for every column's name and compares them without regard to case,
/// on every read of every row.
pub(crate) struct ColumnNames(Vec<String>);

impl ColumnNames {
    /// The names of `statement`'s result columns.
    pub(crate) fn of(statement: &rusqlite::Statement<'_>) -> Self {
        Self(
            statement
                .column_names()
                .into_iter()
                .map(String::from)
                .collect(),
        )
    }
}

/// Reads one full row of the outbox table, whose columns are `names`.
pub(crate) fn decode(row: &Row<'_>, names: &ColumnNames) -> Result<OutboxEntry> {
    rows::entry(&Columns {
        row,
        names,
        cursor: ColumnCursor::new(),
    })
}

/// The entry `id` as `get` (the table's `get.sql`) reads it on `conn`, if there is one.
pub(crate) fn fetch(conn: &Connection, get: &str, id: EntryId) -> Result<Option<OutboxEntry>> {
    let mut statement = super::statement(conn, get)?;
    let names = ColumnNames::of(&statement);
    let found = statement
        .query_row([id.as_uuid().as_bytes()], |row| Ok(decode(row, &names)))
        .optional()
        .map_err(map_direct)?;
    found.transpose()
}

/// How the SQLite schema stores each kind of column, read from a `rusqlite` row.
struct Columns<'a, 'r> {
    row: &'a Row<'r>,
    names: &'a ColumnNames,
    cursor: ColumnCursor,
}

impl Columns<'_, '_> {
    fn read<T: FromSql>(&self, column: &str) -> ColumnRead<T> {
        let names = &self.names.0;
        let index = self.cursor.find(column, names.len(), |i| &names[i])?;
        self.row.get(index).map_err(|e| e.to_string())
    }
}

impl EntryColumns for Columns<'_, '_> {
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
