//! [`SqlServerStoreConfig`]: the table, the limits, and how conflicts are retried.

use outbox_core::{StoreLimits, TableName};

use crate::RetryPolicy;

/// How a [`crate::SqlServerClaimStore`] is set up.
#[derive(Debug, Clone, Default)]
pub struct SqlServerStoreConfig {
    /// The outbox table (default `outbox` in the login's default schema).
    pub table: TableName,
    /// The bounds the store enforces on its inputs.
    pub limits: StoreLimits,
    /// How calls the server rolled back (deadlock victim, lock timeout) are retried.
    pub retry: RetryPolicy,
}

impl SqlServerStoreConfig {
    /// The defaults for `table`.
    pub fn for_table(table: TableName) -> Self {
        Self {
            table,
            ..Self::default()
        }
    }
}
