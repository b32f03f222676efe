//! The one mapping from sqlx's MySQL errors to the core's error kinds, with the server's
//! error number and SQLSTATE kept in the message, and the retry of the transactions the
//! server chose as deadlock victims.

use outbox_core::OutboxError;
use sqlx::mysql::MySqlDatabaseError;

/// Server error numbers this mapping distinguishes.
const NO_SUCH_TABLE: u16 = 1146;
const NO_SUCH_COLUMN: u16 = 1054;
const DEADLOCK: u16 = 1213;
const LOCK_WAIT_TIMEOUT: u16 = 1205;
const DUPLICATE_KEY: u16 = 1062;
/// Errors that say the connection or the server is gone, not the statement wrong.
const CONNECTION_LOST: [u16; 5] = [1040, 1053, 2006, 2013, 1927];

/// Maps a sqlx MySQL error to the core's kinds: a missing table or column means not
/// migrated, a deadlock or lock-wait timeout a conflict (retried by the store's `ConflictRetry`), a lost
/// connection a connection failure.
pub(crate) fn map_err(err: sqlx::Error) -> OutboxError {
    match &err {
        sqlx::Error::Database(db) => {
            let (number, state) = db
                .try_downcast_ref::<MySqlDatabaseError>()
                .map(|e| (e.number(), e.code().unwrap_or("").to_owned()))
                .unwrap_or((0, String::new()));
            let message = format!("{} (server error {number}, SQLSTATE {state})", db.message());
            match number {
                NO_SUCH_TABLE | NO_SUCH_COLUMN => {
                    OutboxError::SchemaNotMigrated { detail: message }
                }
                DEADLOCK | LOCK_WAIT_TIMEOUT => OutboxError::Conflict {
                    message,
                    source: Some(Box::new(err)),
                },
                DUPLICATE_KEY => OutboxError::Database {
                    message: format!("duplicate key: {message}"),
                    source: Some(Box::new(err)),
                },
                n if CONNECTION_LOST.contains(&n) => OutboxError::Connection {
                    message,
                    source: Some(Box::new(err)),
                },
                _ => OutboxError::Database {
                    message,
                    source: Some(Box::new(err)),
                },
            }
        }
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
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

/// Whether `err` is the server's report of a duplicate key.
pub(crate) fn is_duplicate(err: &sqlx::Error) -> bool {
    err.as_database_error()
        .and_then(|db| db.try_downcast_ref::<MySqlDatabaseError>())
        .is_some_and(|e| e.number() == DUPLICATE_KEY)
}
