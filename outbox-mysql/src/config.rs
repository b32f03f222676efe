//! How a MariaDB / MySQL store is built.

use std::sync::Arc;
use std::time::Duration;

use outbox_core::store_kit::config::StoreBasics;
use outbox_core::{Clock, ConflictRetry, StoreLimits, TableName};

/// Settings of a [`crate::MySqlClaimStore`], as a builder with defaults.
#[derive(Debug, Clone)]
pub struct MySqlStoreConfig {
    pub(crate) basics: StoreBasics,
    pub(crate) acquire_timeout: Duration,
    pub(crate) conflict_retry: ConflictRetry,
}

impl Default for MySqlStoreConfig {
    fn default() -> Self {
        Self {
            basics: StoreBasics::default(),
            acquire_timeout: Duration::from_secs(10),
            conflict_retry: ConflictRetry::default(),
        }
    }
}

impl MySqlStoreConfig {
    /// Defaults: table `outbox` in the connection's database, default limits, the system
    /// clock, up to 8 pooled connections, 10 s to get one (for
    /// [`crate::MySqlClaimStore::open`]).
    pub fn new() -> Self {
        Self::default()
    }

    /// Uses another table; [`TableName::in_schema`] names its database.
    pub fn table(mut self, table: TableName) -> Self {
        self.basics.table = table;
        self
    }

    /// Enforces `limits` on every call.
    pub fn limits(mut self, limits: StoreLimits) -> Self {
        self.basics.limits = limits;
        self
    }

    /// Reads the time that enqueues, completions and saves record (creation, update and
    /// delivery times) from `clock` when a request carries no `now`. Claims, leases and
    /// eligibility are judged on the server's clock, which every worker shares.
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.basics.clock = clock;
        self
    }

    /// The pool size used by [`crate::MySqlClaimStore::open`] (at least 1).
    pub fn max_connections(mut self, n: u32) -> Self {
        self.basics.set_max_connections(n);
        self
    }

    /// How long a call waits for a pooled connection before failing with
    /// [`outbox_core::OutboxError::Connection`] (used by [`crate::MySqlClaimStore::open`]).
    pub fn acquire_timeout(mut self, timeout: Duration) -> Self {
        self.acquire_timeout = timeout;
        self
    }

    /// How a call the server rolled back (a deadlock victim, a lock wait that timed out)
    /// is run again; by default up to 5 tries with jittered exponential backoff.
    pub fn conflict_retry(mut self, policy: ConflictRetry) -> Self {
        self.conflict_retry = policy;
        self
    }

    /// The table this configuration names.
    pub fn table_name(&self) -> &TableName {
        &self.basics.table
    }
}
