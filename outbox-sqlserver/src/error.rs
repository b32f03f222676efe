//! SQL Server errors in the core's terms, with the server's error number kept.

use std::fmt;

use outbox_core::{EntryId, OutboxError};

/// Error numbers the store treats specially.
pub mod numbers {
    /// The transaction was chosen as a deadlock victim and rolled back.
    pub const DEADLOCK_VICTIM: u32 = 1205;
    /// `LOCK_TIMEOUT` expired while waiting for a lock.
    pub const LOCK_TIMEOUT: u32 = 1222;
    /// A primary key or unique constraint was violated.
    pub const UNIQUE_CONSTRAINT: u32 = 2627;
    /// A unique index was violated.
    pub const UNIQUE_INDEX: u32 = 2601;
    /// Invalid object name: the table does not exist.
    pub const INVALID_OBJECT: u32 = 208;
    /// READPAST used outside READ COMMITTED / REPEATABLE READ (e.g. under SNAPSHOT).
    pub const READPAST_ISOLATION: u32 = 650;
    /// The database named at login cannot be opened.
    pub const CANNOT_OPEN_DATABASE: u32 = 4060;
    /// Login failed.
    pub const LOGIN_FAILED: u32 = 18456;
    /// A SET option required by a filtered index has the wrong value.
    pub const SET_OPTIONS: u32 = 1934;
}

/// An error the server raised, as the store's errors carry it (their `source`): hosts
/// can downcast to it to read the error number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerError {
    /// The error number (`ERROR_NUMBER()`), e.g. 1205 for a deadlock victim.
    pub number: u32,
    /// The error state.
    pub state: u8,
    /// The severity class.
    pub class: u8,
    /// The server's message.
    pub message: String,
}

impl fmt::Display for ServerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (SQL Server error {}, state {}, class {})",
            self.message, self.number, self.state, self.class
        )
    }
}

impl std::error::Error for ServerError {}

impl ServerError {
    /// The server error inside a driver error, if it is one.
    pub(crate) fn of(err: &tiberius::error::Error) -> Option<Self> {
        match err {
            tiberius::error::Error::Server(t) => Some(Self {
                number: t.code(),
                state: t.state(),
                class: t.class(),
                message: t.message().to_owned(),
            }),
            _ => None,
        }
    }
}

/// Whether a failed call may simply be run again on a fresh connection: the server
/// rolled the whole batch back (deadlock victim, or a lock timeout under XACT_ABORT).
pub(crate) fn is_transient(err: &tiberius::error::Error) -> bool {
    ServerError::of(err)
        .is_some_and(|s| matches!(s.number, numbers::DEADLOCK_VICTIM | numbers::LOCK_TIMEOUT))
}

/// Maps a driver error to the core's kinds.
pub(crate) fn map_err(err: tiberius::error::Error) -> OutboxError {
    match ServerError::of(&err) {
        Some(server) => map_server(server),
        None => map_client(err),
    }
}

/// Maps a server error (also used on recorded responses in tests).
pub(crate) fn map_server(server: ServerError) -> OutboxError {
    let message = server.to_string();
    let source = Some(Box::new(server.clone()) as outbox_core::BoxError);
    match server.number {
        numbers::DEADLOCK_VICTIM | numbers::LOCK_TIMEOUT => {
            OutboxError::Conflict { message, source }
        }
        numbers::INVALID_OBJECT => OutboxError::SchemaNotMigrated { detail: message },
        numbers::READPAST_ISOLATION | numbers::SET_OPTIONS => OutboxError::Unsupported(message),
        numbers::CANNOT_OPEN_DATABASE | numbers::LOGIN_FAILED => {
            OutboxError::Connection { message, source }
        }
        _ => OutboxError::Database { message, source },
    }
}

fn map_client(err: tiberius::error::Error) -> OutboxError {
    use tiberius::error::Error as E;
    let message = err.to_string();
    match err {
        E::Io { .. } | E::Tls(_) | E::Routing { .. } | E::Protocol(_) => OutboxError::Connection {
            message,
            source: Some(Box::new(err)),
        },
        _ => OutboxError::Database {
            message,
            source: Some(Box::new(err)),
        },
    }
}

/// Maps an insert's error: a key violation names the entry whose id already exists
/// (the server's message quotes the key as hex); anything else as [`map_err`].
pub(crate) fn map_insert_err(err: tiberius::error::Error, ids: &[EntryId]) -> OutboxError {
    match ServerError::of(&err) {
        Some(s) if matches!(s.number, numbers::UNIQUE_CONSTRAINT | numbers::UNIQUE_INDEX) => {
            OutboxError::DuplicateId(duplicate_in(&s.message, ids).unwrap_or(ids[0]))
        }
        _ => map_err(err),
    }
}

/// The id the server's duplicate-key message names, when it is one of `ids`.
fn duplicate_in(message: &str, ids: &[EntryId]) -> Option<EntryId> {
    let lower = message.to_ascii_lowercase();
    ids.iter()
        .copied()
        .find(|id| lower.contains(&format!("0x{}", id.as_uuid().simple())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded(number: u32, message: &str) -> ServerError {
        ServerError {
            number,
            state: 1,
            class: 13,
            message: message.to_owned(),
        }
    }

    #[test]
    fn deadlock_victims_and_lock_timeouts_are_conflicts_with_their_number_kept() {
        let deadlock = recorded(
            1205,
            "Transaction (Process ID 57) was deadlocked on lock resources with another process and has been chosen as the deadlock victim. Rerun the transaction.",
        );
        let err = map_server(deadlock);
        assert!(matches!(err, OutboxError::Conflict { .. }), "{err:?}");
        assert!(err.to_string().contains("error 1205"), "{err}");
        let source = std::error::Error::source(&err).expect("a source");
        let server = source.downcast_ref::<ServerError>().expect("a ServerError");
        assert_eq!(server.number, 1205);
        let timeout = map_server(recorded(1222, "Lock request time out period exceeded."));
        assert!(
            matches!(timeout, OutboxError::Conflict { .. }),
            "{timeout:?}"
        );
    }

    #[test]
    fn a_missing_table_means_not_migrated() {
        let err = map_server(recorded(208, "Invalid object name 'dbo.outbox'."));
        assert!(
            matches!(err, OutboxError::SchemaNotMigrated { .. }),
            "{err:?}"
        );
    }

    #[test]
    fn readpast_under_snapshot_and_wrong_set_options_are_configuration_errors() {
        let err = map_server(recorded(
            650,
            "You can only specify the READPAST lock in the READ COMMITTED or REPEATABLE READ isolation levels.",
        ));
        assert!(matches!(err, OutboxError::Unsupported(_)), "{err:?}");
        let err = map_server(recorded(1934, "UPDATE failed because the following SET options have incorrect settings: 'ARITHABORT'."));
        assert!(matches!(err, OutboxError::Unsupported(_)), "{err:?}");
    }

    #[test]
    fn login_failures_are_connection_errors_that_keep_the_servers_words() {
        let err = map_server(recorded(18456, "Login failed for user 'sa'."));
        assert!(matches!(err, OutboxError::Connection { .. }), "{err:?}");
        assert!(
            err.to_string().contains("Login failed for user 'sa'"),
            "{err}"
        );
        assert!(err.to_string().contains("18456"), "{err}");
    }

    #[test]
    fn other_server_errors_are_database_errors_with_their_number() {
        let err = map_server(recorded(8152, "String or binary data would be truncated."));
        assert!(matches!(err, OutboxError::Database { .. }), "{err:?}");
        assert!(err.to_string().contains("error 8152"), "{err}");
    }

    #[test]
    fn io_failures_are_connection_errors() {
        let err = map_err(tiberius::error::Error::Io {
            kind: std::io::ErrorKind::ConnectionReset,
            message: "connection reset by peer".into(),
        });
        assert!(matches!(err, OutboxError::Connection { .. }), "{err:?}");
    }

    #[test]
    fn a_duplicate_key_message_names_the_entry() {
        let a = EntryId::new();
        let b = EntryId::new();
        let message = format!(
            "Violation of PRIMARY KEY constraint 'outbox_pk'. Cannot insert duplicate key in object 'dbo.outbox'. The duplicate key value is (0x{}).",
            b.as_uuid().simple().to_string().to_uppercase()
        );
        assert_eq!(duplicate_in(&message, &[a, b]), Some(b));
        assert_eq!(duplicate_in("no key here", &[a, b]), None);
    }
}
