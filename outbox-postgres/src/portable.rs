//! The portable store on PostgreSQL (`outbox_core::portable`, feature `sqlx`):
//! timestamptz, uuid, jsonb, bytea and smallint columns, `$n` placeholders, and the
//! server's `now()`: the same table as [`crate::PgClaimStore`].

use chrono::{DateTime, Utc};
use outbox_core::portable::{
    Dialect, Placeholders, PortableConfig, PortableStore, SqlParam, SqlxBackend, SqlxEngine,
    SqlxQuery,
};
use outbox_core::{EmissionStatus, EntryId, Headers, OutboxEntry, OutboxError, Quotes, Result};
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
/// [`crate::migrate`]. Name the schema in the config's table name, or rely on the
/// connections' `search_path`.
pub async fn portable_store(pool: PgPool, config: PortableConfig) -> Result<PortablePgStore> {
    PortableStore::new(PgBackend::new(pool), config).await
}

/// A stored integer that must fit a `u32` (attempt counts).
fn to_count(id: &str, field: &str, value: i64) -> Result<u32> {
    u32::try_from(value).map_err(|_| OutboxError::CorruptRow {
        id: id.to_owned(),
        reason: format!("{field} {value} is out of range"),
    })
}

/// A stored status code.
fn to_status(id: &str, code: i64) -> Result<EmissionStatus> {
    EmissionStatus::from_code(code).ok_or_else(|| OutboxError::CorruptRow {
        id: id.to_owned(),
        reason: format!("unknown status code {code}"),
    })
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

fn corrupt(id: &str, what: impl std::fmt::Display) -> OutboxError {
    OutboxError::CorruptRow {
        id: id.to_owned(),
        reason: what.to_string(),
    }
}

fn decode_entry(row: &PgRow) -> Result<OutboxEntry> {
    let id: Uuid = row.try_get("id").map_err(|e| corrupt("?", e))?;
    let key = id.to_string();
    let k = key.as_str();
    let time = |c: &str| {
        row.try_get::<Option<DateTime<Utc>>, _>(c)
            .map_err(|e| corrupt(k, e))
    };
    let required = |c: &str| {
        row.try_get::<DateTime<Utc>, _>(c)
            .map_err(|e| corrupt(k, e))
    };
    let text = |c: &str| {
        row.try_get::<Option<String>, _>(c)
            .map_err(|e| corrupt(k, e))
    };
    let int = |c: &str| {
        row.try_get::<i32, _>(c)
            .map_err(|e| corrupt(k, e))
            .and_then(|v| to_count(k, c, i64::from(v)))
    };
    let status: i16 = row.try_get("status").map_err(|e| corrupt(k, e))?;
    let headers: Json<Headers> = row.try_get("headers").map_err(|e| corrupt(k, e))?;
    Ok(OutboxEntry {
        id: EntryId::from_uuid(id),
        topic: row.try_get("topic").map_err(|e| corrupt(k, e))?,
        partition_key: text("partition_key")?,
        payload: row.try_get("payload").map_err(|e| corrupt(k, e))?,
        headers: headers.0,
        status: to_status(k, i64::from(status))?,
        created_at: required("created_at")?,
        updated_at: required("updated_at")?,
        not_before: time("not_before")?,
        next_retry_at: time("next_retry_at")?,
        attempt_count: int("attempt_count")?,
        last_error: text("last_error")?,
        dead_letter_reason: text("dead_letter_reason")?,
        delivered_at: time("delivered_at")?,
        provider_message_id: text("provider_message_id")?,
        claim_owner: text("claim_owner")?,
        claim_token: row.try_get("claim_token").map_err(|e| corrupt(k, e))?,
        claimed_at: time("claimed_at")?,
        claim_expires_at: time("claim_expires_at")?,
        claim_attempt_count: int("claim_attempt_count")?,
        stamp: row.try_get("stamp").map_err(|e| corrupt(k, e))?,
    })
}

fn decode_clock(row: &PgRow) -> Result<DateTime<Utc>> {
    row.try_get("clock_now").map_err(|e| corrupt("clock", e))
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
        decode_clock(row)
    }

    fn decode_entry(row: &PgRow) -> Result<OutboxEntry> {
        decode_entry(row)
    }

    fn decode_id(row: &PgRow) -> Result<EntryId> {
        let id: uuid::Uuid = sqlx::Row::try_get(row, "id").map_err(|e| corrupt("?", e))?;
        Ok(EntryId::from_uuid(id))
    }

    fn rows_affected(done: &sqlx::postgres::PgQueryResult) -> u64 {
        done.rows_affected()
    }
}
