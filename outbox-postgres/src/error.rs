//! The one mapping from tokio-postgres errors (by SQLSTATE) to the core's error kinds.

use outbox_core::{EntryId, OutboxError};
use tokio_postgres::error::SqlState;

/// Maps a driver error to the core's kinds.
pub(crate) fn map_err(err: tokio_postgres::Error) -> OutboxError {
    let message = err
        .as_db_error()
        .map(|db| db.message().to_owned())
        .unwrap_or_else(|| err.to_string());
    match err.code().map(|c| c.code().to_owned()) {
        Some(state) => outbox_core::store_kit::from_sqlstate(&state, message, Some(Box::new(err))),
        // No SQLSTATE: the client failed, not the server; a closed or broken connection.
        None if err.is_closed() || err.to_string().contains("connection") => {
            OutboxError::Connection {
                message,
                source: Some(Box::new(err)),
            }
        }
        None => OutboxError::Database {
            message,
            source: Some(Box::new(err)),
        },
    }
}

/// Maps a failure to borrow a pooled connection.
pub(crate) fn map_pool_err(err: deadpool_postgres::PoolError) -> OutboxError {
    match err {
        deadpool_postgres::PoolError::Backend(e) => map_err(e),
        other => OutboxError::Connection {
            message: format!("no pooled connection: {other}"),
            source: Some(Box::new(other)),
        },
    }
}

/// Maps an insert's error, naming the entry when it is a duplicate of an existing id.
///
/// The server names the duplicate key in the error's detail; the id is found by looking
/// for each inserted id there, which does not depend on the server's message language.
pub(crate) fn map_insert_err(err: tokio_postgres::Error, ids: &[EntryId]) -> OutboxError {
    if err.code() == Some(&SqlState::UNIQUE_VIOLATION) {
        let detail = err
            .as_db_error()
            .and_then(|db| db.detail())
            .unwrap_or_default()
            .to_owned();
        if let Some(id) = ids.iter().find(|id| detail.contains(&id.to_string())) {
            return OutboxError::DuplicateId(*id);
        }
    }
    map_err(err)
}
