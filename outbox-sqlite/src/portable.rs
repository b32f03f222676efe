//! The portable store on SQLite (`outbox_core::portable`): times as integer microseconds
//! since the Unix epoch, uuids as 16-byte blobs, headers as JSON text, statuses as integer
//! codes: the same table and row format as [`crate::SqliteClaimStore`].

use chrono::{DateTime, Utc};
use outbox_core::portable::{Dialect, Placeholders, PortableConfig, PortableStore, SqlParam};
use outbox_core::{OutboxError, Quotes, Result};
use sqlx::query::Query;
use sqlx::sqlite::{Sqlite, SqliteArguments, SqliteConnection, SqlitePool, SqliteRow};
use sqlx::Row;

use crate::error::map_err;
use crate::row::decode;

/// The SQLite side of the portable store: its pool (see [`PortableSqliteStore`]).
#[derive(Debug, Clone)]
pub struct SqliteBackend {
    pool: SqlitePool,
}

impl SqliteBackend {
    /// The pool the store runs on.
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }
}

/// The portable store on SQLite.
pub type PortableSqliteStore = PortableStore<SqliteBackend>;

/// Builds the portable store on a SQLite pool. Open the pool in WAL mode with a busy
/// timeout when several connections or processes share the file; the table must have
/// been created with [`crate::migrate`].
pub async fn portable_store(
    pool: SqlitePool,
    config: PortableConfig,
) -> Result<PortableSqliteStore> {
    PortableStore::new(SqliteBackend { pool }, config).await
}

type SqliteQuery<'q> = Query<'q, Sqlite, SqliteArguments<'q>>;

fn bind(query: SqliteQuery<'_>, param: SqlParam) -> Result<SqliteQuery<'_>> {
    Ok(match param {
        SqlParam::Uuid(v) => query.bind(v),
        SqlParam::Time(v) => query.bind(v.map(|t| t.timestamp_micros())),
        SqlParam::Text(v) => query.bind(v),
        SqlParam::Bytes(v) => query.bind(v),
        SqlParam::Headers(h) => query.bind(
            serde_json::to_string(&h)
                .map_err(|e| OutboxError::invalid("headers", e.to_string()))?,
        ),
        SqlParam::Status(s) => query.bind(i64::from(s.code())),
        SqlParam::Count(n) => query.bind(i64::from(n)),
    })
}

fn build(sql: &str, params: Vec<SqlParam>) -> Result<SqliteQuery<'_>> {
    params.into_iter().try_fold(sqlx::query(sql), bind)
}

fn corrupt(id: &str, what: impl std::fmt::Display) -> OutboxError {
    OutboxError::CorruptRow {
        id: id.to_owned(),
        reason: what.to_string(),
    }
}

fn decode_clock(row: &SqliteRow) -> Result<DateTime<Utc>> {
    let v: i64 = row.try_get("clock_now").map_err(|e| corrupt("clock", e))?;
    DateTime::from_timestamp_micros(v)
        .ok_or_else(|| corrupt("clock", format!("clock_now {v} is not a time")))
}

outbox_core::sqlx_portable_backend!(SqliteBackend {
    database: Sqlite,
    connection: SqliteConnection,
    name: "portable-sqlite",
    concurrent_writes: false,
    dialect: Dialect {
        placeholders: Placeholders::Question,
        quotes: Quotes::DOUBLE,
        // Milliseconds (SQLite's clock resolution), rounded so the float's error vanishes.
        db_now: "(CAST(ROUND((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER) * 1000)",
        materialized: "MATERIALIZED",
        bigint: "BIGINT",
    },
    build: build,
    map_err: map_err,
    decode_clock: decode_clock,
    decode_entry: decode,
    corrupt: corrupt,
});
