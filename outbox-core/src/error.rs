//! The one error type of the project.

use std::error::Error as StdError;

/// A boxed driver error kept as the source of an [`OutboxError`].
pub type BoxError = Box<dyn StdError + Send + Sync + 'static>;

/// Everything that can go wrong in an outbox store or the drain.
///
/// Transition outcomes that are not applied (a stale claim, a terminal row, …) are
/// **not** errors: they are reported as a [`crate::TransitionOutcome`]. Errors are for
/// input the store refuses and for failures of the database itself.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutboxError {
    /// The caller passed a value the store refuses; nothing was written.
    #[error("invalid {field}: {reason}")]
    InvalidInput {
        /// The name of the offending parameter or field.
        field: &'static str,
        /// What is wrong with it, in words a host can show an operator.
        reason: String,
    },
    /// An entry with this id already exists; nothing was written.
    #[error("an outbox entry with id {0} already exists")]
    DuplicateId(crate::EntryId),
    /// The outbox table (or its schema) does not exist: the migrations were never applied.
    #[error("the outbox schema is not migrated: {detail} (apply the migrations first)")]
    SchemaNotMigrated {
        /// What was missing, as the database reported it.
        detail: String,
    },
    /// The schema is older than this store: the migrations of this release were not
    /// applied yet.
    #[error(
        "the outbox schema is at version {found}, this store needs version {expected}: apply \
         this release's migrations first (`outbox migrate`, or the store crate's `migrate`)"
    )]
    SchemaVersionMismatch {
        /// The migration version this build of the store requires.
        expected: i64,
        /// The version recorded in the database.
        found: i64,
    },
    /// The schema is newer than this store and a migration since contracted it past this
    /// store's version: the store of an older release, outside the schema's compatibility
    /// window.
    #[error(
        "the outbox schema is at version {found}, which runs stores of schema version \
         {oldest_compatible} or later, and this store is of version {store}: finish the \
         rollout of the release that migrated it (this release is too old for the schema)"
    )]
    SchemaPastWindow {
        /// The schema version this build of the store was written for.
        store: i64,
        /// The version recorded in the database.
        found: i64,
        /// The oldest store version the recorded schema runs.
        oldest_compatible: i64,
    },
    /// A migration was edited after the database applied it: its checksum no longer
    /// matches the one recorded. Nothing was applied.
    #[error(
        "migration {file} (version {version}) was edited after it was applied: the database \
         recorded checksum {recorded}, this build's file has {expected}; restore the file as \
         it was applied and put the change in a new migration"
    )]
    MigrationChecksumMismatch {
        /// The migration's version.
        version: i64,
        /// The migration's file name.
        file: String,
        /// The checksum recorded when it was applied.
        recorded: String,
        /// The checksum of this build's file.
        expected: String,
    },
    /// A stored function's definition was applied at this build's revision from other SQL:
    /// its file changed without its revision being raised. Nothing was applied.
    #[error(
        "definition {name} (revision {revision}) was applied from other SQL than this \
         build's (recorded checksum {recorded}, this build's {expected}): raise its revision \
         when its SQL changes"
    )]
    DefinitionChecksumMismatch {
        /// The definition's name.
        name: String,
        /// The revision both claim.
        revision: i64,
        /// The checksum recorded when it was applied.
        recorded: String,
        /// The checksum of this build's file.
        expected: String,
    },
    /// A migration that cannot be reverted stands between the schema and the version asked
    /// for; nothing was reverted.
    #[error("migration {file} (version {version}) cannot be reverted: {reason}")]
    IrreversibleMigration {
        /// The migration's version.
        version: i64,
        /// The migration's file name.
        file: String,
        /// Why, as its down script says.
        reason: String,
    },
    /// The database could not be opened or reached, or the connection broke mid-call.
    /// The call may or may not have been applied only where the store says so; claims and
    /// completions are atomic, so a lost connection leaves nothing half-applied.
    #[error("database connection failed: {message}")]
    Connection {
        /// What the driver reported.
        message: String,
        /// The driver error.
        #[source]
        source: Option<BoxError>,
    },
    /// The database aborted the statement because of a conflict with another transaction
    /// (serialization failure, deadlock victim, busy file) even after the store's retries.
    #[error("the database aborted the call because of a concurrent transaction: {message}")]
    Conflict {
        /// What the driver reported.
        message: String,
        /// The driver error.
        #[source]
        source: Option<BoxError>,
    },
    /// The database is configured in a way this store cannot work with.
    #[error("unsupported database configuration: {0}")]
    Unsupported(String),
    /// A row in the outbox table holds a value this build cannot read.
    #[error("corrupt outbox row {id}: {reason}")]
    CorruptRow {
        /// The row's id as text (it may itself be the unreadable part).
        id: String,
        /// What could not be read.
        reason: String,
    },
    /// Any other database failure.
    #[error("database error: {message}")]
    Database {
        /// What the driver reported.
        message: String,
        /// The driver error.
        #[source]
        source: Option<BoxError>,
    },
}

impl OutboxError {
    /// Builds an [`OutboxError::InvalidInput`].
    pub fn invalid(field: &'static str, reason: impl Into<String>) -> Self {
        Self::InvalidInput {
            field,
            reason: reason.into(),
        }
    }

    /// The error's kind as a stable, low-cardinality name (the variant in snake case), for
    /// metric labels and for telling one kind of failure from another without reading the
    /// message: `invalid_input`, `duplicate_id`, `schema_not_migrated`,
    /// `schema_version_mismatch`, `schema_past_window`, `migration_checksum_mismatch`,
    /// `irreversible_migration`, `definition_checksum_mismatch`, `connection`, `conflict`, `unsupported`, `corrupt_row`,
    /// `database`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::InvalidInput { .. } => "invalid_input",
            Self::DuplicateId(_) => "duplicate_id",
            Self::SchemaNotMigrated { .. } => "schema_not_migrated",
            Self::SchemaVersionMismatch { .. } => "schema_version_mismatch",
            Self::SchemaPastWindow { .. } => "schema_past_window",
            Self::MigrationChecksumMismatch { .. } => "migration_checksum_mismatch",
            Self::IrreversibleMigration { .. } => "irreversible_migration",
            Self::DefinitionChecksumMismatch { .. } => "definition_checksum_mismatch",
            Self::Connection { .. } => "connection",
            Self::Conflict { .. } => "conflict",
            Self::Unsupported(_) => "unsupported",
            Self::CorruptRow { .. } => "corrupt_row",
            Self::Database { .. } => "database",
        }
    }

    /// True when the store refuses the schema it found (never migrated, older than the
    /// store, or contracted past its window): retrying will not help until an operator
    /// migrates or finishes a rollout.
    pub fn is_schema_refusal(&self) -> bool {
        matches!(
            self,
            Self::SchemaNotMigrated { .. }
                | Self::SchemaVersionMismatch { .. }
                | Self::SchemaPastWindow { .. }
        )
    }

    /// True when the error is a refusal of the caller's input (nothing was written).
    pub fn is_invalid_input(&self) -> bool {
        matches!(self, Self::InvalidInput { .. })
    }
}

/// The result type of every fallible outbox call.
pub type Result<T, E = OutboxError> = std::result::Result<T, E>;

/// The core's kind for a PostgreSQL error by its SQLSTATE, whichever driver reported it:
/// a missing table or schema means not migrated; a serialization failure, deadlock or
/// lock timeout is a conflict; connection exceptions and server shutdowns are connection
/// failures; anything else is a database error.
pub fn from_sqlstate(state: &str, message: String, source: Option<BoxError>) -> OutboxError {
    match state {
        // undefined_table, undefined_column (a schema older than the statement),
        // invalid_schema_name
        "42P01" | "42703" | "3F000" => OutboxError::SchemaNotMigrated { detail: message },
        // serialization_failure, deadlock_detected, lock_not_available
        "40001" | "40P01" | "55P03" => OutboxError::Conflict { message, source },
        // connection exceptions; admin_shutdown, crash_shutdown, cannot_connect_now
        s if s.starts_with("08") || matches!(s, "57P01" | "57P02" | "57P03") => {
            OutboxError::Connection { message, source }
        }
        _ => OutboxError::Database { message, source },
    }
}

#[cfg(test)]
mod sqlstate_tests {
    use super::*;

    #[test]
    fn sqlstates_map_to_their_kinds() {
        let kind = |s| from_sqlstate(s, "m".into(), None);
        assert!(matches!(
            kind("42P01"),
            OutboxError::SchemaNotMigrated { .. }
        ));
        assert!(matches!(
            kind("42703"),
            OutboxError::SchemaNotMigrated { .. }
        ));
        assert!(matches!(
            kind("3F000"),
            OutboxError::SchemaNotMigrated { .. }
        ));
        for s in ["40001", "40P01", "55P03"] {
            assert!(matches!(kind(s), OutboxError::Conflict { .. }), "{s}");
        }
        for s in ["08006", "57P01", "57P02", "57P03"] {
            assert!(matches!(kind(s), OutboxError::Connection { .. }), "{s}");
        }
        assert!(matches!(kind("23505"), OutboxError::Database { .. }));
    }
}

/// `error` and its causes on one line, each cause after `: ` unless the text so far
/// already holds it (many errors repeat their source's message), newlines as spaces: the
/// form an emitter's failure reason or a command's error line takes.
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text.replace('\n', " ")
}

#[cfg(test)]
mod chain_tests {
    use super::error_chain;

    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<Layer>>);

    impl std::fmt::Display for Layer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Layer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|l| l as _)
        }
    }

    #[test]
    fn causes_join_on_one_line_without_repeats() {
        let inner = Layer("connection refused\n(os error 111)", None);
        let middle = Layer("tcp connect error", Some(Box::new(inner)));
        let outer = Layer("request failed: tcp connect error", Some(Box::new(middle)));
        assert_eq!(
            error_chain(&outer),
            "request failed: tcp connect error: connection refused (os error 111)"
        );
    }
}
