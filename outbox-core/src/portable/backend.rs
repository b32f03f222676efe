//! What differs between the databases the portable store runs on, as data and as a
//! handful of typed I/O primitives. Everything else is written once, in the store.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::{EmissionStatus, EntryId, Headers, OutboxEntry, OutboxError, Result};

/// A database the portable store runs on: SQLite (`SqliteBackend`, feature
/// `portable-sqlite`) or PostgreSQL (`PgBackend`, feature `portable-postgres`).
///
/// The trait is sealed: its workings (placeholder style, clock expression, type mapping,
/// error mapping) are internal to this crate and may change without notice.
pub trait PortableBackend: sealed::Backend {}

impl<T: sealed::Backend> PortableBackend for T {}

/// How a backend spells bind parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placeholders {
    /// `?`, numbered by position (SQLite). Templates are written this way.
    Question,
    /// `$1`, `$2`, … (PostgreSQL); the templates' `?` are rewritten once at build time.
    Dollar,
}

/// One bound value, in the store's own terms; each backend maps it to its column type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SqlParam {
    /// An id, token or stamp.
    Uuid(Option<Uuid>),
    /// A point in time, already normalized to microseconds.
    Time(Option<DateTime<Utc>>),
    /// Text.
    Text(Option<String>),
    /// Bytes.
    Bytes(Vec<u8>),
    /// Message headers (JSON text or jsonb).
    Headers(Headers),
    /// A status, as its code.
    Status(EmissionStatus),
    /// A whole number from 0 to `u32::MAX`: a count (attempts), a row limit, a slice
    /// count or index, a slice hash.
    Count(u32),
}

impl From<EntryId> for SqlParam {
    fn from(id: EntryId) -> Self {
        Self::Uuid(Some(id.as_uuid()))
    }
}

impl From<Uuid> for SqlParam {
    fn from(id: Uuid) -> Self {
        Self::Uuid(Some(id))
    }
}

impl From<DateTime<Utc>> for SqlParam {
    fn from(at: DateTime<Utc>) -> Self {
        Self::Time(Some(at))
    }
}

impl From<Option<DateTime<Utc>>> for SqlParam {
    fn from(at: Option<DateTime<Utc>>) -> Self {
        Self::Time(at)
    }
}

impl From<&str> for SqlParam {
    fn from(s: &str) -> Self {
        Self::Text(Some(s.to_owned()))
    }
}

impl From<Option<String>> for SqlParam {
    fn from(s: Option<String>) -> Self {
        Self::Text(s)
    }
}

impl From<u32> for SqlParam {
    fn from(n: u32) -> Self {
        Self::Count(n)
    }
}

/// A row read together with the instant its caller works at (see `read_entry.sql`).
pub(crate) type ClockedEntry = (DateTime<Utc>, OutboxEntry);

pub(crate) mod sealed {
    use super::*;

    /// The per-database half of the portable store.
    #[async_trait]
    pub trait Backend: Send + Sync + 'static {
        /// The sqlx database.
        type Db: sqlx::Database;
        /// The name reported in [`crate::Capabilities`].
        const NAME: &'static str;
        /// Whether the engine serves writes from several connections at once.
        const CONCURRENT_WRITES: bool;
        /// How bind parameters are spelled.
        const PLACEHOLDERS: Placeholders;
        /// An expression for the database's current time, in the column type of times.
        const DB_NOW: &'static str;

        /// Maps a driver error to the core's kinds.
        fn map_err(err: sqlx::Error) -> OutboxError;

        /// Runs a query whose first column is the clock and the rest an entry.
        async fn fetch_entries(
            conn: &mut <Self::Db as sqlx::Database>::Connection,
            sql: &str,
            params: Vec<SqlParam>,
        ) -> Result<Vec<ClockedEntry>>;

        /// Runs a query returning (clock, id) rows.
        async fn fetch_ids(
            conn: &mut <Self::Db as sqlx::Database>::Connection,
            sql: &str,
            params: Vec<SqlParam>,
        ) -> Result<Vec<(DateTime<Utc>, EntryId)>>;

        /// Runs a query returning one clock value.
        async fn fetch_clock(
            conn: &mut <Self::Db as sqlx::Database>::Connection,
            sql: &str,
            params: Vec<SqlParam>,
        ) -> Result<DateTime<Utc>>;

        /// Runs a query returning one row of integers (counts); returns its columns.
        async fn fetch_counts(
            conn: &mut <Self::Db as sqlx::Database>::Connection,
            sql: &str,
            params: Vec<SqlParam>,
        ) -> Result<Vec<i64>>;

        /// Runs a statement; returns the rows it affected.
        async fn execute(
            conn: &mut <Self::Db as sqlx::Database>::Connection,
            sql: &str,
            params: Vec<SqlParam>,
        ) -> Result<u64>;
    }
}

/// A stored integer that must fit a `u32` (attempt counts).
#[cfg(feature = "portable-postgres")]
pub(crate) fn to_count(id: &str, field: &str, value: i64) -> Result<u32> {
    u32::try_from(value).map_err(|_| OutboxError::CorruptRow {
        id: id.to_owned(),
        reason: format!("{field} {value} is out of range"),
    })
}

/// A stored status code.
#[cfg(feature = "portable-postgres")]
pub(crate) fn to_status(id: &str, code: i64) -> Result<EmissionStatus> {
    EmissionStatus::from_code(code).ok_or_else(|| OutboxError::CorruptRow {
        id: id.to_owned(),
        reason: format!("unknown status code {code}"),
    })
}

/// Whether the driver reports a unique-key violation (an id that already exists).
pub(crate) fn is_unique_violation(err: &sqlx::Error) -> bool {
    err.as_database_error()
        .is_some_and(|db| db.is_unique_violation())
}
