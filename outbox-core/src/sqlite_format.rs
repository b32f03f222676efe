//! The SQLite row format (times as integer microseconds, UUIDs as 16-byte blobs,
//! headers as JSON text, statuses as small integer codes) and the mapping of sqlx's SQLite
//! errors: one reading for the portable store and the `outbox-sqlite` store, which share
//! the table.

use chrono::{DateTime, Utc};
use sqlx::sqlite::SqliteRow;
use sqlx::Row;
use uuid::Uuid;

use crate::{EmissionStatus, EntryId, Headers, OutboxEntry, OutboxError, Result};

fn corrupt(id: &str, reason: impl Into<String>) -> OutboxError {
    OutboxError::CorruptRow {
        id: id.to_owned(),
        reason: reason.into(),
    }
}

fn time(id: &str, column: &str, v: i64) -> Result<DateTime<Utc>> {
    DateTime::from_timestamp_micros(v)
        .ok_or_else(|| corrupt(id, format!("{column} {v} is out of range")))
}

fn opt_time(id: &str, column: &str, v: Option<i64>) -> Result<Option<DateTime<Utc>>> {
    v.map(|v| time(id, column, v)).transpose()
}

pub(crate) fn uuid(id: &str, column: &str, bytes: &[u8]) -> Result<Uuid> {
    Uuid::from_slice(bytes).map_err(|_| corrupt(id, format!("{column} is not 16 bytes")))
}

fn count(id: &str, column: &str, v: i64) -> Result<u32> {
    u32::try_from(v).map_err(|_| corrupt(id, format!("{column} {v} is out of range")))
}

fn get<'r, T: sqlx::Decode<'r, sqlx::Sqlite> + sqlx::Type<sqlx::Sqlite>>(
    row: &'r SqliteRow,
    id: &str,
    column: &str,
) -> Result<T> {
    row.try_get(column)
        .map_err(|e| corrupt(id, format!("{column}: {e}")))
}

/// Reads one full row of the outbox table.
pub fn decode_entry(row: &SqliteRow) -> Result<OutboxEntry> {
    let raw_id: Vec<u8> = get(row, "?", "id")?;
    let id_uuid = uuid("?", "id", &raw_id)?;
    let id = id_uuid.to_string();
    let id = id.as_str();
    let status_code: i64 = get(row, id, "status")?;
    let headers_json: String = get(row, id, "headers")?;
    let headers: Headers = serde_json::from_str(&headers_json)
        .map_err(|e| corrupt(id, format!("headers are not a JSON object of strings: {e}")))?;
    let token: Option<Vec<u8>> = get(row, id, "claim_token")?;
    let stamp: Vec<u8> = get(row, id, "stamp")?;
    Ok(OutboxEntry {
        id: EntryId::from_uuid(id_uuid),
        topic: get(row, id, "topic")?,
        partition_key: get(row, id, "partition_key")?,
        payload: get(row, id, "payload")?,
        headers,
        status: EmissionStatus::from_code(status_code)
            .ok_or_else(|| corrupt(id, format!("unknown status code {status_code}")))?,
        created_at: time(id, "created_at", get(row, id, "created_at")?)?,
        updated_at: time(id, "updated_at", get(row, id, "updated_at")?)?,
        not_before: opt_time(id, "not_before", get(row, id, "not_before")?)?,
        next_retry_at: opt_time(id, "next_retry_at", get(row, id, "next_retry_at")?)?,
        attempt_count: count(id, "attempt_count", get(row, id, "attempt_count")?)?,
        last_error: get(row, id, "last_error")?,
        dead_letter_reason: get(row, id, "dead_letter_reason")?,
        delivered_at: opt_time(id, "delivered_at", get(row, id, "delivered_at")?)?,
        provider_message_id: get(row, id, "provider_message_id")?,
        claim_owner: get(row, id, "claim_owner")?,
        claim_token: token.map(|t| uuid(id, "claim_token", &t)).transpose()?,
        claimed_at: opt_time(id, "claimed_at", get(row, id, "claimed_at")?)?,
        claim_expires_at: opt_time(id, "claim_expires_at", get(row, id, "claim_expires_at")?)?,
        claim_attempt_count: count(
            id,
            "claim_attempt_count",
            get(row, id, "claim_attempt_count")?,
        )?,
        stamp: uuid(id, "stamp", &stamp)?,
    })
}

/// SQLite's primary result codes this mapping distinguishes.
const SQLITE_BUSY: &str = "5";
const SQLITE_LOCKED: &str = "6";
const SQLITE_READONLY: &str = "8";
const SQLITE_CANTOPEN: &str = "14";
const SQLITE_CONSTRAINT_PRIMARYKEY: &str = "1555";

/// Maps a sqlx SQLite error to the core's kinds: a missing table or column means not
/// migrated (to this build's version),
/// a busy or locked database a conflict, a file that cannot be written a connection
/// failure.
pub fn map_sqlx_error(err: sqlx::Error) -> OutboxError {
    match &err {
        sqlx::Error::Database(db) => {
            let code = db.code().map(|c| c.into_owned()).unwrap_or_default();
            let message = db.message().to_owned();
            let primary = code
                .parse::<u32>()
                .map(|c| (c & 0xff).to_string())
                .unwrap_or_default();
            if message.contains("no such table") || message.contains("no such column") {
                OutboxError::SchemaNotMigrated { detail: message }
            } else if primary == SQLITE_BUSY || primary == SQLITE_LOCKED {
                OutboxError::Conflict {
                    message,
                    source: Some(Box::new(err)),
                }
            } else if primary == SQLITE_READONLY || primary == SQLITE_CANTOPEN {
                OutboxError::Connection {
                    message: format!("the database file cannot be written: {message}"),
                    source: Some(Box::new(err)),
                }
            } else if code == SQLITE_CONSTRAINT_PRIMARYKEY {
                OutboxError::Database {
                    message: format!("duplicate key: {message}"),
                    source: Some(Box::new(err)),
                }
            } else {
                OutboxError::Database {
                    message,
                    source: Some(Box::new(err)),
                }
            }
        }
        sqlx::Error::Io(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => OutboxError::Connection {
            message: err.to_string(),
            source: Some(Box::new(err)),
        },
        _ => OutboxError::Database {
            message: err.to_string(),
            source: Some(Box::new(err)),
        },
    }
}
