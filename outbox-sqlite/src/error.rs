//! The one mapping from SQLite's errors, as either driver reports them (sqlx on the pool,
//! rusqlite on the store's own connection), to the core's error kinds, and the file's
//! name on the errors that are about the file.

use std::error::Error as StdError;
use std::path::Path;

use outbox_core::OutboxError;

/// SQLite's primary result codes this mapping distinguishes.
const SQLITE_BUSY: u32 = 5;
const SQLITE_LOCKED: u32 = 6;
const SQLITE_READONLY: u32 = 8;
const SQLITE_CANTOPEN: u32 = 14;
/// The extended code of a primary key that is already taken.
const SQLITE_CONSTRAINT_PRIMARYKEY: u32 = 1555;

/// Maps a sqlx SQLite error to the core's kinds (the one mapping, shared with the
/// portable store's backend); see [`classify`].
pub(crate) fn map_err(err: sqlx::Error) -> OutboxError {
    match &err {
        sqlx::Error::Database(db) => {
            let code = db.code().and_then(|c| c.parse::<u32>().ok());
            let message = db.message().to_owned();
            classify(code, message, Box::new(err))
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

/// Maps an error of the store's own (rusqlite) connection to the core's kinds, as
/// [`map_err`] maps sqlx's.
///
/// Errors of other kinds are classified by their text alone: a host whose build turns
/// on rusqlite's `modern_sqlite` feature (Cargo unifies features across the build) gets
/// statements that fail to prepare, a missing table or column among them, as
/// `SqlInputError`, whose code this crate cannot name without that feature, and such a
/// table is still not migrated.
pub(crate) fn map_direct(err: rusqlite::Error) -> OutboxError {
    match &err {
        rusqlite::Error::SqliteFailure(failure, message) => {
            let message = message.clone().unwrap_or_else(|| failure.to_string());
            classify(Some(extended(failure)), message, Box::new(err))
        }
        _ => classify(None, err.to_string(), Box::new(err)),
    }
}

/// The extended result code of a rusqlite failure.
fn extended(failure: &rusqlite::ffi::Error) -> u32 {
    u32::try_from(failure.extended_code).unwrap_or_default()
}

/// SQLite's error, by its extended result `code` and `message`: a missing table or column
/// means not migrated (to this build's version), a busy or locked database a conflict, a
/// file that cannot be written a connection failure.
fn classify(
    code: Option<u32>,
    message: String,
    source: Box<dyn StdError + Send + Sync>,
) -> OutboxError {
    let primary = code.map(|c| c & 0xff);
    let source = Some(source);
    if message.contains("no such table") || message.contains("no such column") {
        OutboxError::SchemaNotMigrated { detail: message }
    } else if primary == Some(SQLITE_BUSY) || primary == Some(SQLITE_LOCKED) {
        OutboxError::Conflict { message, source }
    } else if primary == Some(SQLITE_READONLY) || primary == Some(SQLITE_CANTOPEN) {
        OutboxError::Connection {
            message: format!("the database file cannot be written: {message}"),
            source,
        }
    } else if code == Some(SQLITE_CONSTRAINT_PRIMARYKEY) {
        OutboxError::Database {
            message: format!("duplicate key: {message}"),
            source,
        }
    } else {
        OutboxError::Database { message, source }
    }
}

/// The extended result code of a SQLite error, whichever driver reported it.
pub(crate) fn sqlite_code(err: &(dyn StdError + 'static)) -> Option<u32> {
    if let Some(err) = err.downcast_ref::<sqlx::Error>() {
        return err.as_database_error()?.code()?.parse().ok();
    }
    match err.downcast_ref::<rusqlite::Error>()? {
        rusqlite::Error::SqliteFailure(failure, _) => Some(extended(failure)),
        _ => None,
    }
}

/// SQLite's result codes that speak of the file rather than of the statement, and what
/// each tells an operator to look at: extended codes first, then primary ones.
const ABOUT_THE_FILE: [(u32, &str); 7] = [
    (
        4874,
        "no room on its disk for the shared-memory file SQLite needs to open it",
    ),
    (8, "the file or its directory cannot be written"),
    (
        10,
        "the file system refused the read or write: mounted read-only after an error, or a failing disk",
    ),
    (11, "the file is damaged"),
    (13, "the disk holding it is full"),
    (14, "the file cannot be opened"),
    (26, "the file is not a SQLite database"),
];

/// What SQLite's error `err` (from either driver) says about the database file, if it
/// is about the file.
pub(crate) fn file_hint(err: &(dyn StdError + 'static)) -> Option<&'static str> {
    let code = sqlite_code(err)?;
    ABOUT_THE_FILE
        .iter()
        .find(|(c, _)| *c == code)
        .or_else(|| ABOUT_THE_FILE.iter().find(|(c, _)| *c == code & 0xff))
        .map(|(_, hint)| *hint)
}

/// Names `file` in `err` when SQLite's error is about the file (a full disk, a read-only
/// or failing file system), with what that code means, so an operator reading a drain's
/// warning knows which file on which disk to look at. Other errors pass through unchanged.
pub(crate) fn naming_the_file(mut err: OutboxError, file: &Path) -> OutboxError {
    if let OutboxError::Database { message, source } | OutboxError::Connection { message, source } =
        &mut err
    {
        let hint = source
            .as_deref()
            .and_then(|s| file_hint(s as &(dyn StdError + 'static)));
        if let Some(hint) = hint {
            *message = format!("{message} (SQLite file {}: {hint})", file.display());
        }
    }
    err
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_table_is_not_migrated_whatever_kind_of_rusqlite_error_says_so() {
        // As SQLite reports a statement that fails to prepare.
        let conn = rusqlite::Connection::open_in_memory().expect("a connection");
        let failed = conn.prepare("SELECT * FROM outbox").unwrap_err();
        assert!(
            matches!(map_direct(failed), OutboxError::SchemaNotMigrated { .. }),
            "a statement on a missing table"
        );
        // As an error of another kind says it (rusqlite's `SqlInputError`, which this
        // build cannot name, reads the same).
        let other = rusqlite::Error::ToSqlConversionFailure(Box::new(std::io::Error::other(
            "no such column: stamp",
        )));
        let mapped = map_direct(other);
        assert!(
            matches!(mapped, OutboxError::SchemaNotMigrated { ref detail } if detail.contains("stamp")),
            "{mapped:?}"
        );
        // Anything else stays a database error.
        let other = rusqlite::Error::InvalidQuery;
        assert!(matches!(map_direct(other), OutboxError::Database { .. }));
    }
}
