//! The one mapping from sqlx's SQLite errors to the core's error kinds.

use outbox_core::OutboxError;

/// SQLite's primary result codes this mapping distinguishes.
const SQLITE_BUSY: &str = "5";
const SQLITE_LOCKED: &str = "6";
const SQLITE_READONLY: &str = "8";
const SQLITE_CANTOPEN: &str = "14";
const SQLITE_CONSTRAINT_PRIMARYKEY: &str = "1555";

/// Maps a driver error to the core's kinds.
pub(crate) fn map_err(err: sqlx::Error) -> OutboxError {
    match &err {
        sqlx::Error::Database(db) => {
            let code = db.code().map(|c| c.into_owned()).unwrap_or_default();
            let message = db.message().to_owned();
            let primary = code
                .parse::<u32>()
                .map(|c| (c & 0xff).to_string())
                .unwrap_or_default();
            if message.contains("no such table") {
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
