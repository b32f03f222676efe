//! The one mapping from tokio-postgres errors (by SQLSTATE) to the core's error kinds.

use outbox_core::OutboxError;
use tokio_postgres::error::SqlState;

/// Maps a driver error to the core's kinds.
pub(crate) fn map_err(err: tokio_postgres::Error) -> OutboxError {
    let message = err
        .as_db_error()
        .map(|db| db.message().to_owned())
        .unwrap_or_else(|| err.to_string());
    match err.code() {
        Some(c) if *c == SqlState::UNDEFINED_TABLE || *c == SqlState::INVALID_SCHEMA_NAME => {
            OutboxError::SchemaNotMigrated { detail: message }
        }
        Some(c)
            if *c == SqlState::T_R_SERIALIZATION_FAILURE
                || *c == SqlState::T_R_DEADLOCK_DETECTED
                || *c == SqlState::LOCK_NOT_AVAILABLE =>
        {
            OutboxError::Conflict {
                message,
                source: Some(Box::new(err)),
            }
        }
        Some(c)
            if c.code().starts_with("08")
                || *c == SqlState::ADMIN_SHUTDOWN
                || *c == SqlState::CRASH_SHUTDOWN
                || *c == SqlState::CANNOT_CONNECT_NOW =>
        {
            OutboxError::Connection {
                message,
                source: Some(Box::new(err)),
            }
        }
        None if err.is_closed() || err.to_string().contains("connection") => {
            OutboxError::Connection {
                message,
                source: Some(Box::new(err)),
            }
        }
        _ => OutboxError::Database {
            message,
            source: Some(Box::new(err)),
        },
    }
}
