//! [`SqlServerStoreConfig`]: the table, the limits, and how conflicts are retried.

use std::time::Duration;

use outbox_core::{StoreLimits, TableName, DEFAULT_FULL_WALK_EVERY};

use outbox_core::ConflictRetry;

/// How a [`crate::SqlServerClaimStore`] is set up.
#[derive(Debug, Clone)]
pub struct SqlServerStoreConfig {
    /// The outbox table (default `outbox` in the login's default schema).
    pub table: TableName,
    /// The bounds the store enforces on its inputs.
    pub limits: StoreLimits,
    /// How calls the server rolled back (deadlock victim, lock timeout) are retried.
    pub retry: ConflictRetry,
    /// How often a claim walks the pending index from its beginning while batches come
    /// back full (other claims start at the oldest pending entry the previous one took;
    /// see `outbox_core::store_kit::claims::ClaimStarts`). At most an hour: a longer one fails the store's
    /// construction with `InvalidInput`.
    pub full_walk_every: Duration,
}

impl Default for SqlServerStoreConfig {
    /// Table `outbox`, default limits and retries, a walk from the beginning every second.
    fn default() -> Self {
        Self {
            table: TableName::default(),
            limits: StoreLimits::default(),
            retry: ConflictRetry::default(),
            full_walk_every: DEFAULT_FULL_WALK_EVERY,
        }
    }
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
