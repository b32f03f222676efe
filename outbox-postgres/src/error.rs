//! The one mapping from tokio-postgres errors (by SQLSTATE) to the core's error kinds.

use outbox_core::{EntryId, OutboxError};
use tokio_postgres::error::SqlState;

/// What to set when a statement's name was not found on the server, or found taken: the
/// connection goes through a transaction-mode pooler.
pub(crate) const POOLER_HINT: &str = "the connection goes through a transaction-mode pooler \
     (PgBouncer, RDS Proxy, Supavisor, pgcat), which hands each transaction to another \
     server connection, so statements prepared under a name are lost; send them unnamed: \
     statement_mode=unnamed in the connection string (outbox --statement-mode unnamed, \
     PgStoreConfig::statement_mode(StatementMode::Unnamed))";

/// What a read-only refusal means to a pool: see [`from_state`].
const READ_ONLY_HINT: &str = "the server is read-only (demoted, or a standby behind the \
     name): a store drops a connection that meets this, and a new one looks for a server \
     that takes writes where the connection string lists several hosts with \
     target_session_attrs=read-write";

/// The one reading of a PostgreSQL SQLSTATE, for both drivers: the core's kinds, with
/// the pooler hint on a lost or taken statement name, and a read-only refusal (25006) as a
/// fault of the connection, whose replacement may reach the new primary.
pub(crate) fn from_state(
    state: &str,
    message: String,
    source: Box<dyn std::error::Error + Send + Sync>,
) -> OutboxError {
    match state {
        "26000" | "42P05" => outbox_core::store_kit::sql::from_sqlstate(
            state,
            format!("{message}: {POOLER_HINT}"),
            Some(source),
        ),
        "25006" => OutboxError::Connection {
            message: format!("{message} ({READ_ONLY_HINT})"),
            source: Some(source),
        },
        _ => outbox_core::store_kit::sql::from_sqlstate(state, message, Some(source)),
    }
}

/// Maps a driver error to the core's kinds.
pub(crate) fn map_err(err: tokio_postgres::Error) -> OutboxError {
    let message = err
        .as_db_error()
        .map(|db| db.message().to_owned())
        .unwrap_or_else(|| err.to_string());
    match err.code().map(|c| c.code().to_owned()) {
        Some(state) => from_state(&state, message, Box::new(err)),
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
