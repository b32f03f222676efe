//! [`StatementMode`]: how the store's statements reach the server, named and cached per
//! connection or unnamed, for connections that go through a transaction-mode pooler.

use std::fmt;
use std::str::FromStr;

use outbox_core::OutboxError;

/// How the store sends its statements.
///
/// A transaction-mode pooler (PgBouncer with `pool_mode = transaction`, RDS Proxy,
/// Supavisor, pgcat) hands each transaction to whichever server connection is free. A
/// statement prepared under a name lives on one server connection only, so the next
/// call, served by another, fails with `prepared statement "s3" does not exist`
/// (SQLSTATE 26000) or, where a name is reused, `already exists` (42P05).
///
/// - [`StatementMode::Named`] (the default): each statement is prepared once per
///   connection under a name and reused; the fastest on a direct connection (or through a
///   session-mode pooler).
/// - [`StatementMode::Unnamed`]: each call parses, binds and runs its statement in one
///   round trip, under no name, so nothing outlives the transaction: what a
///   transaction-mode pooler needs. Bulk enqueues take the one-statement insert instead of
///   `COPY` (which needs a statement of its own before its data). The server parses each
///   statement again on every call; the benchmark report gives the cost.
///
/// Set it with [`crate::PgStoreConfig::statement_mode`], or in the connection string as
/// `statement_mode=unnamed`, which [`crate::connect_settings`] reads (and removes before
/// the driver sees the rest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StatementMode {
    /// Prepared once per connection under a name, then reused.
    #[default]
    Named,
    /// Parsed, bound and run in one round trip under no name, on every call.
    Unnamed,
}

impl StatementMode {
    /// The name the connection string and the command use: `named` or `unnamed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Named => "named",
            Self::Unnamed => "unnamed",
        }
    }

    /// True where a bulk enqueue may stream its rows with `COPY`.
    pub(crate) fn copies_in_bulk(self) -> bool {
        self == Self::Named
    }
}

impl fmt::Display for StatementMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for StatementMode {
    type Err = OutboxError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "named" => Ok(Self::Named),
            "unnamed" => Ok(Self::Unnamed),
            other => Err(OutboxError::invalid(
                "statement mode",
                format!(
                    "{other:?} is neither \"named\" (prepared statements, for direct \
                     connections) nor \"unnamed\" (for transaction-mode poolers)"
                ),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_round_trip_through_their_names() {
        for mode in [StatementMode::Named, StatementMode::Unnamed] {
            assert_eq!(mode.as_str().parse::<StatementMode>().unwrap(), mode);
        }
        assert_eq!(StatementMode::default(), StatementMode::Named);
        let err = "Unnamed".parse::<StatementMode>().unwrap_err();
        assert!(
            err.to_string().contains("transaction-mode poolers"),
            "{err}"
        );
    }
}
