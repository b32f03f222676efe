//! How a portable store is set up.

use crate::{StoreLimits, TableName};

/// The configuration of a [`PortableStore`](super::PortableStore): which table, and the
/// bounds it enforces.
///
/// ```
/// use outbox_core::portable::PortableConfig;
/// use outbox_core::{StoreLimits, TableName};
///
/// let config = PortableConfig::default()
///     .table(TableName::new("events_outbox")?)
///     .limits(StoreLimits::default().with_max_batch_size(500)?);
/// assert_eq!(config.table.table(), "events_outbox");
/// # Ok::<(), outbox_core::OutboxError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PortableConfig {
    /// The outbox table, migrated with the backend crate's migrations
    /// (`outbox_sqlite::migrate` or `outbox_postgres::migrate`).
    pub table: TableName,
    /// The bounds the store enforces on its inputs.
    pub limits: StoreLimits,
}

impl PortableConfig {
    /// Uses `table` instead of the default `outbox`.
    pub fn table(mut self, table: TableName) -> Self {
        self.table = table;
        self
    }

    /// Enforces `limits` instead of the defaults.
    pub fn limits(mut self, limits: StoreLimits) -> Self {
        self.limits = limits;
        self
    }
}
