//! The portable store on SQLite: times as integer microseconds since the Unix epoch,
//! uuids as 16-byte blobs, headers as JSON text, statuses as integer codes.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::query::Query;
use sqlx::sqlite::{Sqlite, SqliteArguments, SqliteConnection, SqlitePool, SqliteRow};
use sqlx::Row;
use uuid::Uuid;

use crate::{EntryId, OutboxEntry, OutboxError, Result};

use super::backend::sealed::Backend;
use super::backend::{ClockedEntry, Placeholders, SqlParam};
use super::{PortableConfig, PortableStore};

/// The SQLite side of the portable store (see [`PortableSqliteStore`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct SqliteBackend;

/// The portable store on SQLite.
pub type PortableSqliteStore = PortableStore<SqliteBackend>;

impl PortableStore<SqliteBackend> {
    /// Builds the store on a SQLite pool. Open the pool in WAL mode with a busy timeout
    /// when several connections or processes share the file; the table must have been
    /// created with `outbox_sqlite::migrate`.
    pub async fn sqlite(pool: SqlitePool, config: PortableConfig) -> Result<Self> {
        Self::new(pool, config).await
    }
}

type SqliteQuery<'q> = Query<'q, Sqlite, SqliteArguments<'q>>;

fn map_err(err: sqlx::Error) -> OutboxError {
    crate::sqlite_format::map_sqlx_error(err)
}

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

fn micros(id: &str, field: &str, value: Option<i64>) -> Result<Option<DateTime<Utc>>> {
    value
        .map(|v| {
            DateTime::from_timestamp_micros(v)
                .ok_or_else(|| corrupt(id, format!("{field} {v} is not a time")))
        })
        .transpose()
}

fn decode_entry(row: &SqliteRow) -> Result<OutboxEntry> {
    crate::sqlite_format::decode_entry(row)
}

fn decode_clock(row: &SqliteRow) -> Result<DateTime<Utc>> {
    let v: i64 = row.try_get("clock_now").map_err(|e| corrupt("clock", e))?;
    micros("clock", "clock_now", Some(v))?.ok_or_else(|| corrupt("clock", "no time"))
}

#[async_trait]
impl Backend for SqliteBackend {
    type Db = Sqlite;
    const NAME: &'static str = "portable-sqlite";
    const CONCURRENT_WRITES: bool = false;
    const PLACEHOLDERS: Placeholders = Placeholders::Question;
    // Milliseconds (SQLite's clock resolution), rounded so the float's error vanishes.
    const DB_NOW: &'static str =
        "(CAST(ROUND((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER) * 1000)";

    fn map_err(err: sqlx::Error) -> OutboxError {
        map_err(err)
    }

    async fn fetch_entries(
        conn: &mut SqliteConnection,
        sql: &str,
        params: Vec<SqlParam>,
    ) -> Result<Vec<ClockedEntry>> {
        let rows = build(sql, params)?
            .fetch_all(&mut *conn)
            .await
            .map_err(map_err)?;
        rows.iter()
            .map(|r| Ok((decode_clock(r)?, decode_entry(r)?)))
            .collect()
    }

    async fn fetch_ids(
        conn: &mut SqliteConnection,
        sql: &str,
        params: Vec<SqlParam>,
    ) -> Result<Vec<(DateTime<Utc>, EntryId)>> {
        let rows = build(sql, params)?
            .fetch_all(&mut *conn)
            .await
            .map_err(map_err)?;
        rows.iter()
            .map(|r| {
                let id: Uuid = r.try_get("id").map_err(|e| corrupt("?", e))?;
                Ok((decode_clock(r)?, EntryId::from_uuid(id)))
            })
            .collect()
    }

    async fn fetch_clock(
        conn: &mut SqliteConnection,
        sql: &str,
        params: Vec<SqlParam>,
    ) -> Result<DateTime<Utc>> {
        let row = build(sql, params)?
            .fetch_one(&mut *conn)
            .await
            .map_err(map_err)?;
        decode_clock(&row)
    }

    async fn fetch_counts(
        conn: &mut SqliteConnection,
        sql: &str,
        params: Vec<SqlParam>,
    ) -> Result<Vec<i64>> {
        let row = build(sql, params)?
            .fetch_one(&mut *conn)
            .await
            .map_err(map_err)?;
        (0..row.len())
            .map(|i| row.try_get::<i64, _>(i).map_err(map_err))
            .collect()
    }

    async fn execute(conn: &mut SqliteConnection, sql: &str, params: Vec<SqlParam>) -> Result<u64> {
        let done = build(sql, params)?
            .execute(&mut *conn)
            .await
            .map_err(map_err)?;
        Ok(done.rows_affected())
    }
}
