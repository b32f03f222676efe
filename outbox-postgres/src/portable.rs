//! The portable store on PostgreSQL (`outbox_core::portable`, feature `sqlx`):
//! timestamptz, uuid, jsonb, bytea and smallint columns, `$n` placeholders, and the
//! server's `now()`: the same table as [`crate::PgClaimStore`].

use chrono::{DateTime, Utc};
use outbox_core::portable::{
    Dialect, Placeholders, PortableConfig, PortableStore, SqlParam, SqlxBackend, SqlxEngine,
    SqlxQuery,
};
use outbox_core::store_kit::rows::{self, ColumnRead, EntryColumns};
use outbox_core::{EntryId, Headers, OutboxEntry, OutboxError, Quotes, Result};
use sqlx::postgres::{PgArguments, PgPool, PgRow, Postgres};
use sqlx::query::Query;
use sqlx::types::Json;
use sqlx::Row;
use uuid::Uuid;

/// The PostgreSQL engine of the portable store: native column types, `$n` placeholders,
/// the server's `now()`.
#[derive(Debug, Clone, Copy)]
pub struct PgEngine;

/// The portable store's backend on a PostgreSQL pool (see [`PortablePgStore`]); its pool
/// is [`SqlxBackend::pool`].
pub type PgBackend = SqlxBackend<PgEngine>;

/// The portable store on PostgreSQL.
pub type PortablePgStore = PortableStore<PgBackend>;

/// Builds the portable store on a PostgreSQL pool; the table must have been created with
/// [`crate::migrate()`]. Name the schema in the config's table name, or rely on the
/// connections' `search_path`.
pub async fn portable_store(pool: PgPool, config: PortableConfig) -> Result<PortablePgStore> {
    PortableStore::new(PgBackend::new(pool), config).await
}

type PgQuery<'q> = Query<'q, Postgres, PgArguments>;

/// Maps a sqlx PostgreSQL error to the core's kinds, by SQLSTATE.
fn map_err(err: sqlx::Error) -> OutboxError {
    let (message, state) = match &err {
        sqlx::Error::Database(db) => (
            db.message().to_owned(),
            db.code().map(|c| c.into_owned()).unwrap_or_default(),
        ),
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => {
            return OutboxError::Connection {
                message: err.to_string(),
                source: Some(Box::new(err)),
            }
        }
        _ => (err.to_string(), String::new()),
    };
    outbox_core::store_kit::sql::from_sqlstate(&state, message, Some(Box::new(err)))
}

fn bind(query: PgQuery<'_>, param: SqlParam) -> PgQuery<'_> {
    match param {
        SqlParam::Uuid(v) => query.bind(v),
        SqlParam::Time(v) => query.bind(v),
        SqlParam::Text(v) => query.bind(v),
        SqlParam::Bytes(v) => query.bind(v),
        SqlParam::Headers(h) => query.bind(Json(h)),
        SqlParam::Status(s) => query.bind(s.code()),
        SqlParam::Count(n) => query.bind(i64::from(n)),
    }
}

fn build(sql: &str, params: Vec<SqlParam>) -> Result<PgQuery<'_>> {
    Ok(params.into_iter().fold(sqlx::query(sql), bind))
}

/// The columns of a row as sqlx reads them: the same types as [`crate::row`] reads.
struct Columns<'r>(&'r PgRow);

impl Columns<'_> {
    fn read<'r, T: sqlx::Decode<'r, Postgres> + sqlx::Type<Postgres>>(
        &'r self,
        column: &str,
    ) -> ColumnRead<T> {
        self.0.try_get(column).map_err(|e| e.to_string())
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
        Ok(self.read::<Json<Headers>>(column)?.map(|h| h.0))
    }
}

impl SqlxEngine for PgEngine {
    type Database = Postgres;
    const NAME: &'static str = "portable-postgres";
    const CONCURRENT_WRITES: bool = true;
    const DIALECT: Dialect = Dialect {
        placeholders: Placeholders::Dollar,
        quotes: Quotes::DOUBLE,
        db_now: "now()",
        materialized: "MATERIALIZED",
        bigint: "BIGINT",
    };

    fn bind(sql: &str, params: Vec<SqlParam>) -> Result<SqlxQuery<'_, Self>> {
        build(sql, params)
    }

    fn map_err(e: sqlx::Error) -> OutboxError {
        map_err(e)
    }

    fn decode_clock(row: &PgRow) -> Result<DateTime<Utc>> {
        rows::clock(&Columns(row))
    }

    fn decode_entry(row: &PgRow) -> Result<OutboxEntry> {
        rows::entry(&Columns(row))
    }

    fn decode_id(row: &PgRow) -> Result<EntryId> {
        rows::entry_id(&Columns(row))
    }

    fn rows_affected(done: &sqlx::postgres::PgQueryResult) -> u64 {
        done.rows_affected()
    }
}
