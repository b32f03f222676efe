//! The one mapping from sqlx's SQLite errors to the core's error kinds.

use outbox_core::OutboxError;

/// Maps a driver error to the core's kinds (the one mapping, shared with the portable
/// store).
pub(crate) fn map_err(err: sqlx::Error) -> OutboxError {
    outbox_core::sqlite_format::map_sqlx_error(err)
}
