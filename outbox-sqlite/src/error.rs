//! The one mapping from sqlx's SQLite errors to the core's error kinds, and the file's
//! name on the errors that are about the file.

use std::path::Path;

use outbox_core::OutboxError;

/// SQLite's primary result codes this mapping distinguishes.
const SQLITE_BUSY: &str = "5";
const SQLITE_LOCKED: &str = "6";
const SQLITE_READONLY: &str = "8";
const SQLITE_CANTOPEN: &str = "14";
const SQLITE_CONSTRAINT_PRIMARYKEY: &str = "1555";

/// Maps a sqlx SQLite error to the core's kinds (the one mapping, shared with the
/// portable store's backend): a missing table or column means not
/// migrated (to this build's version),
/// a busy or locked database a conflict, a file that cannot be written a connection
/// failure.
pub(crate) fn map_err(err: sqlx::Error) -> OutboxError {
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

/// What SQLite's error `err` says about the database file, if it is about the file.
pub(crate) fn file_hint(err: &sqlx::Error) -> Option<&'static str> {
    let code = err.as_database_error()?.code()?.parse::<u32>().ok()?;
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
            .as_ref()
            .and_then(|s| s.downcast_ref::<sqlx::Error>())
            .and_then(file_hint);
        if let Some(hint) = hint {
            *message = format!("{message} (SQLite file {}: {hint})", file.display());
        }
    }
    err
}
