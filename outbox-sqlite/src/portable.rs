//! The portable store on SQLite (`outbox_core::portable`): times as integer microseconds
//! since the Unix epoch, uuids as 16-byte blobs, headers as JSON text, statuses as integer
//! codes: the same table and row format as [`crate::SqliteClaimStore`].

use chrono::{DateTime, Utc};
use outbox_core::async_trait;
use outbox_core::portable::{
    ClockedEntry, Placeholders, PortableBackend, PortableConfig, PortableStore, SqlParam,
};
use outbox_core::{EntryId, OutboxError, Result};
use sqlx::pool::PoolConnection;
use sqlx::query::Query;
use sqlx::sqlite::{Sqlite, SqliteArguments, SqliteConnection, SqlitePool, SqliteRow};
use sqlx::{Database, Row, TransactionManager};
use uuid::Uuid;

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

type Transactions = <Sqlite as Database>::TransactionManager;

#[async_trait]
impl PortableBackend for SqliteBackend {
    type Connection = SqliteConnection;
    type Lease = PoolConnection<Sqlite>;
    const NAME: &'static str = "portable-sqlite";
    const CONCURRENT_WRITES: bool = false;
    const PLACEHOLDERS: Placeholders = Placeholders::Question;
    // Milliseconds (SQLite's clock resolution), rounded so the float's error vanishes.
    const DB_NOW: &'static str =
        "(CAST(ROUND((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER) * 1000)";

    async fn acquire(&self) -> Result<Self::Lease> {
        self.pool.acquire().await.map_err(map_err)
    }

    fn close_on_drop(lease: &mut Self::Lease) {
        lease.close_on_drop();
    }

    fn in_transaction(conn: &SqliteConnection) -> bool {
        sqlx::Connection::is_in_transaction(conn)
    }

    async fn begin(conn: &mut SqliteConnection) -> Result<()> {
        Transactions::begin(conn, None).await.map_err(map_err)
    }

    async fn commit(conn: &mut SqliteConnection) -> Result<()> {
        Transactions::commit(conn).await.map_err(map_err)
    }

    async fn rollback(conn: &mut SqliteConnection) -> Result<()> {
        Transactions::rollback(conn).await.map_err(map_err)
    }

    fn is_duplicate(err: &OutboxError) -> bool {
        let source = match err {
            OutboxError::Database { source, .. } | OutboxError::Conflict { source, .. } => source,
            _ => return false,
        };
        source
            .as_ref()
            .and_then(|s| s.downcast_ref::<sqlx::Error>())
            .and_then(|e| e.as_database_error())
            .is_some_and(|db| db.is_unique_violation())
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
            .map(|r| Ok((decode_clock(r)?, decode(r)?)))
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
