//! Rows read on the store's own connection: the same column encodings as [`crate::row`],
//! read through `rusqlite`.

use std::cell::Cell;

use chrono::{DateTime, Utc};
use outbox_core::store_kit::rows::{self, ColumnRead, EntryColumns};
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

    /// The index of `column`, looked for from `from` on, then from the start: an entry
    /// is read in the table's column order, so each is found at the first comparison.
    fn index(&self, column: &str, from: usize) -> std::result::Result<usize, String> {
        let from = from.min(self.0.len());
        (from..self.0.len())
            .chain(0..from)
            .find(|&i| self.0[i] == column)
            .ok_or_else(|| format!("no column {column:?} in the statement's result"))
    }
}

/// Reads one full row of the outbox table, whose columns are `names`.
pub(crate) fn decode(row: &Row<'_>, names: &ColumnNames) -> Result<OutboxEntry> {
    rows::entry(&Columns {
        row,
        names,
        next: Cell::new(0),
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
    /// Where the next column is looked for first.
    next: Cell<usize>,
}

impl Columns<'_, '_> {
    fn read<T: FromSql>(&self, column: &str) -> ColumnRead<T> {
        let index = self.names.index(column, self.next.get())?;
        self.next.set(index + 1);
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
