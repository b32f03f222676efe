//! The portable store on MariaDB / MySQL (`outbox_core::portable`): DATETIME(6) times in
//! UTC, 16-byte binary uuids, JSON text headers, integer status codes, `?` placeholders,
//! backtick-quoted names and the server's `UTC_TIMESTAMP(6)`: the same table and row
//! format as [`crate::MySqlClaimStore`].

use chrono::{DateTime, Utc};
use outbox_core::portable::{
    Dialect, Placeholders, PortableConfig, PortableStore, SqlParam, SqlxBackend, SqlxEngine,
    SqlxQuery,
};
use outbox_core::{EntryId, OutboxEntry, OutboxError, Quotes, Result};
use sqlx::mysql::{MySql, MySqlArguments, MySqlPool, MySqlRow};
use sqlx::query::Query;

use crate::error::map_err;
use crate::row::decode;

/// The MariaDB / MySQL engine of the portable store: DATETIME(6) times, binary uuids,
/// `?` placeholders, backtick quotes, the server's `UTC_TIMESTAMP(6)`.
#[derive(Debug, Clone, Copy)]
pub struct MySqlEngine;

/// The portable store's backend on a MariaDB / MySQL pool (see [`PortableMySqlStore`]); its
/// pool is [`SqlxBackend::pool`].
pub type MySqlBackend = SqlxBackend<MySqlEngine>;

/// The portable store on MariaDB / MySQL.
pub type PortableMySqlStore = PortableStore<MySqlBackend>;

/// Builds the portable store on a pool (open it with
/// [`crate::MySqlClaimStore::open_pool`]); the table must have been created with
/// [`crate::migrate()`].
pub async fn portable_store(pool: MySqlPool, config: PortableConfig) -> Result<PortableMySqlStore> {
    PortableStore::new(MySqlBackend::new(pool), config).await
}

type MySqlQuery<'q> = Query<'q, MySql, MySqlArguments>;

fn bind(query: MySqlQuery<'_>, param: SqlParam) -> Result<MySqlQuery<'_>> {
    Ok(match param {
        SqlParam::Uuid(v) => query.bind(v),
        SqlParam::Time(v) => query.bind(v),
        SqlParam::Text(v) => query.bind(v),
        SqlParam::Bytes(v) => query.bind(v),
        SqlParam::Headers(h) => query.bind(
            serde_json::to_string(&h)
                .map_err(|e| OutboxError::invalid("headers", e.to_string()))?,
        ),
        SqlParam::Status(s) => query.bind(s.code()),
        SqlParam::Count(n) => query.bind(i64::from(n)),
    })
}

fn build(sql: &str, params: Vec<SqlParam>) -> Result<MySqlQuery<'_>> {
    params.into_iter().try_fold(sqlx::query(sql), bind)
}

impl SqlxEngine for MySqlEngine {
    type Database = MySql;
    const NAME: &'static str = "portable-mysql";
    const CONCURRENT_WRITES: bool = true;
    const DIALECT: Dialect = Dialect {
        placeholders: Placeholders::Question,
        quotes: Quotes::BACKTICKS,
        // Typed, so a bound time and the server's agree on the column type.
        db_now: "CAST(UTC_TIMESTAMP(6) AS DATETIME(6))",
        materialized: "",
        bigint: "SIGNED",
    };

    fn bind(sql: &str, params: Vec<SqlParam>) -> Result<SqlxQuery<'_, Self>> {
        build(sql, params)
    }

    fn map_err(e: sqlx::Error) -> OutboxError {
        map_err(e)
    }

    fn decode_clock(row: &MySqlRow) -> Result<DateTime<Utc>> {
        crate::row::clock(row)
    }

    fn decode_entry(row: &MySqlRow) -> Result<OutboxEntry> {
        decode(row)
    }

    fn decode_id(row: &MySqlRow) -> Result<EntryId> {
        crate::row::decode_id(row)
    }

    fn rows_affected(done: &sqlx::mysql::MySqlQueryResult) -> u64 {
        done.rows_affected()
    }
}
