//! The one mapping from sqlx's SQLite errors to the core's error kinds, and the file's
//! name on the errors that are about the file.

use std::path::Path;

use outbox_core::OutboxError;

/// Maps a driver error to the core's kinds (the one mapping, shared with the portable
/// store).
pub(crate) fn map_err(err: sqlx::Error) -> OutboxError {
    outbox_core::sqlite_format::map_sqlx_error(err)
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
