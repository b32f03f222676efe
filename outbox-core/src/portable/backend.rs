//! What differs between the databases the portable store runs on, as data and as a
//! handful of typed I/O primitives. Everything else is written once, in the store.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::{EmissionStatus, EntryId, Headers, OutboxEntry, OutboxError, Result};

/// How a backend spells bind parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placeholders {
    /// `?`, numbered by position (SQLite). Templates are written this way.
    Question,
    /// `$1`, `$2`, … (PostgreSQL); the templates' `?` are rewritten once at build time.
    Dollar,
}

/// How an engine spells the portable store's SQL: every difference between the engines'
/// forms of its statements, as data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dialect {
    /// How bind parameters are spelled.
    pub placeholders: Placeholders,
    /// How identifiers are quoted.
    pub quotes: crate::Quotes,
    /// An expression for the database's current time, in the column type of times.
    pub db_now: &'static str,
    /// The keyword that makes a common table expression be computed once
    /// (`MATERIALIZED`), or nothing on engines that do not spell it (MySQL, MariaDB).
    pub materialized: &'static str,
    /// The type a `CAST` turns a sum into a 64-bit integer with (`BIGINT`; `SIGNED` on
    /// MySQL and MariaDB, whose `SUM` is a decimal and whose `CAST` knows no `BIGINT`).
    pub bigint: &'static str,
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
pub type ClockedEntry = (DateTime<Utc>, OutboxEntry);

/// A database the portable store runs on: what differs between engines, as data (the
/// placeholder style, the clock expression) and as a handful of typed I/O primitives on a
/// driver's connection. On sqlx it is `SqlxBackend` (feature `sqlx`) for every
/// engine; everything else of [`super::PortableStore`] is written once, here.
#[async_trait]
pub trait PortableBackend: Send + Sync + 'static {
    /// The driver's connection: what a host's transaction hands the store in
    /// [`super::PortableStore::enqueue_in`].
    type Connection: Send;
    /// A pooled connection lent to one call.
    type Lease: std::ops::DerefMut<Target = Self::Connection> + Send;

    /// The name reported in [`crate::Capabilities`].
    const NAME: &'static str;
    /// Whether the engine serves writes from several connections at once.
    const CONCURRENT_WRITES: bool;
    /// How the engine spells the store's SQL.
    const DIALECT: Dialect;

    /// Takes a connection from the pool.
    async fn acquire(&self) -> Result<Self::Lease>;

    /// Makes `lease` close its connection when dropped instead of returning it to the
    /// pool: its call was abandoned, perhaps with a statement still waiting for its answer.
    fn close_on_drop(lease: &mut Self::Lease);

    /// Whether the driver counts a transaction open on `conn`.
    fn in_transaction(conn: &Self::Connection) -> bool;

    /// Begins a transaction on `conn`, as the driver counts them.
    async fn begin(conn: &mut Self::Connection) -> Result<()>;

    /// Commits the transaction begun on `conn`.
    async fn commit(conn: &mut Self::Connection) -> Result<()>;

    /// Rolls back the transaction begun on `conn`.
    async fn rollback(conn: &mut Self::Connection) -> Result<()>;

    /// Whether `err` is the driver's report of a unique-key violation (an id that already
    /// exists).
    fn is_duplicate(err: &OutboxError) -> bool;

    /// Runs a query whose first column is the clock and the rest an entry.
    async fn fetch_entries(
        conn: &mut Self::Connection,
        sql: &str,
        params: Vec<SqlParam>,
    ) -> Result<Vec<ClockedEntry>>;

    /// Runs a query returning (clock, id) rows.
    async fn fetch_ids(
        conn: &mut Self::Connection,
        sql: &str,
        params: Vec<SqlParam>,
    ) -> Result<Vec<(DateTime<Utc>, EntryId)>>;

    /// Runs a query returning one clock value.
    async fn fetch_clock(
        conn: &mut Self::Connection,
        sql: &str,
        params: Vec<SqlParam>,
    ) -> Result<DateTime<Utc>>;

    /// Runs a query returning one row of integers (counts); returns its columns.
    async fn fetch_counts(
        conn: &mut Self::Connection,
        sql: &str,
        params: Vec<SqlParam>,
    ) -> Result<Vec<i64>>;

    /// Runs a statement; returns the rows it affected.
    async fn execute(conn: &mut Self::Connection, sql: &str, params: Vec<SqlParam>) -> Result<u64>;
}
