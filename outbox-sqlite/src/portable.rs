//! The portable store on SQLite (`outbox_core::portable`): times as integer microseconds
//! since the Unix epoch, uuids as 16-byte blobs, headers as JSON text, statuses as integer
//! codes: the same table and row format as [`crate::SqliteClaimStore`].

use chrono::{DateTime, Utc};
use outbox_core::portable::{
    Dialect, Placeholders, PortableConfig, PortableStore, SqlParam, SqlxBackend, SqlxEngine,
    SqlxQuery,
};
use outbox_core::{EntryId, OutboxEntry, OutboxError, Quotes, Result};
use sqlx::query::Query;
use sqlx::sqlite::{Sqlite, SqliteArguments, SqlitePool, SqliteRow};

use crate::error::map_err;
use crate::row::decode;

/// The SQLite engine of the portable store: times as integer microseconds, uuids as blobs,
/// `?` placeholders, the file's clock in milliseconds.
#[derive(Debug, Clone, Copy)]
pub struct SqliteEngine;

/// The portable store's backend on a SQLite pool (see [`PortableSqliteStore`]); its pool
/// is [`SqlxBackend::pool`].
pub type SqliteBackend = SqlxBackend<SqliteEngine>;

/// The portable store on SQLite.
pub type PortableSqliteStore = PortableStore<SqliteBackend>;

/// Builds the portable store on a SQLite pool. Open the pool in WAL mode with a busy
/// timeout when several connections or processes share the file; the table must have
/// been created with [`crate::migrate()`].
pub async fn portable_store(
    pool: SqlitePool,
    config: PortableConfig,
) -> Result<PortableSqliteStore> {
    PortableStore::new(SqliteBackend::new(pool), config).await
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

impl SqlxEngine for SqliteEngine {
    type Database = Sqlite;
    const NAME: &'static str = "portable-sqlite";
    const CONCURRENT_WRITES: bool = false;
    const DIALECT: Dialect = Dialect {
        placeholders: Placeholders::Question,
        quotes: Quotes::DOUBLE,
        // Milliseconds (SQLite's clock resolution), rounded so the float's error vanishes.
        db_now: "(CAST(ROUND((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER) * 1000)",
        materialized: "MATERIALIZED",
        bigint: "BIGINT",
    };

    fn bind(sql: &str, params: Vec<SqlParam>) -> Result<SqlxQuery<'_, Self>> {
        build(sql, params)
    }

    fn map_err(e: sqlx::Error) -> OutboxError {
        map_err(e)
    }

    fn decode_clock(row: &SqliteRow) -> Result<DateTime<Utc>> {
        crate::row::clock(row)
    }

    fn decode_entry(row: &SqliteRow) -> Result<OutboxEntry> {
        decode(row)
    }

    fn decode_id(row: &SqliteRow) -> Result<EntryId> {
        crate::row::decode_id(row)
    }

    fn rows_affected(done: &sqlx::sqlite::SqliteQueryResult) -> u64 {
        done.rows_affected()
    }
}
