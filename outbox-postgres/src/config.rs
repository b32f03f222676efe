//! How a [`crate::PgClaimStore`] is set up: the table, the limits, the listener.

use std::sync::Arc;

use outbox_core::{StoreLimits, TableName};

use crate::{PgListener, PgTls};

/// The configuration of a [`crate::PgClaimStore`], built with `Default` and setters.
///
/// ```
/// use outbox_core::{StoreLimits, TableName};
/// use outbox_postgres::PgStoreConfig;
///
/// let config = PgStoreConfig::default()
///     .table(TableName::in_schema("app", "outbox").unwrap())
///     .limits(StoreLimits::default().with_max_batch_size(500).unwrap());
/// assert_eq!(config.table_name().table(), "outbox");
/// ```
#[derive(Debug, Clone, Default)]
pub struct PgStoreConfig {
    pub(crate) table: TableName,
    pub(crate) limits: StoreLimits,
    pub(crate) listener: Option<Arc<PgListener>>,
    pub(crate) tls: Option<PgTls>,
}

impl PgStoreConfig {
    /// The default configuration: table `outbox` on the connection's search path,
    /// default limits, no listener.
    pub fn new() -> Self {
        Self::default()
    }

    /// Uses the outbox table `table` (which the migrations must have created).
    pub fn table(mut self, table: TableName) -> Self {
        self.table = table;
        self
    }

    /// Enforces `limits` on every call.
    pub fn limits(mut self, limits: StoreLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Offers `listener` as the store's wake-up signal; it must listen on this table's
    /// channel (build it with [`PgListener::start`] for the same table).
    pub fn listener(mut self, listener: Arc<PgListener>) -> Self {
        self.listener = Some(listener);
        self
    }

    /// The TLS connector the pool's connections were made with (see
    /// [`crate::connect_config`]). A statement whose call is dropped is cancelled over a
    /// connection of its own, which must be encrypted the same way: without this, a
    /// server that accepts only TLS refuses the cancel and the statement runs on.
    pub fn tls(mut self, tls: PgTls) -> Self {
        self.tls = Some(tls);
        self
    }

    /// The configured table.
    pub fn table_name(&self) -> &TableName {
        &self.table
    }
}
