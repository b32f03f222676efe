//! How a [`crate::PgClaimStore`] is set up: the table, the limits, the listener.

use std::sync::Arc;
use std::time::Duration;

use outbox_core::{OutboxError, Result, StoreLimits, TableName, DEFAULT_FULL_WALK_EVERY};

use crate::{PgListener, PgTls, StatementMode};

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
    pub(crate) call_timeout: CallTimeout,
    pub(crate) full_walk_every: FullWalkEvery,
    pub(crate) statements: StatementMode,
}

/// How long one store call may take by default, end to end: 10 seconds.
///
/// A third of the drain's default lease (30 s), which a worker renews every third of
/// the lease: a renewal that gets no answer fails while its lease still has a third left,
/// and the worker backs off instead of emitting entries it may no longer hold. Ample for
/// any one call the default limits allow (1,000 entries, or a page of a prune) on a
/// loaded server; `outbox stats` on a table of many millions of rows may need more.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// The longest call deadline accepted.
const MAX_CALL_TIMEOUT: Duration = Duration::from_secs(3600);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FullWalkEvery(pub(crate) Duration);

impl Default for FullWalkEvery {
    fn default() -> Self {
        Self(DEFAULT_FULL_WALK_EVERY)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CallTimeout(pub(crate) Duration);

impl Default for CallTimeout {
    fn default() -> Self {
        Self(DEFAULT_CALL_TIMEOUT)
    }
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

    /// Bounds every store call, waiting for a pooled connection included, by `timeout`
    /// ([`DEFAULT_CALL_TIMEOUT`] unless set). A call past it fails with
    /// [`OutboxError::Connection`] and its connection is closed; whether what it asked was
    /// applied is then unknown, as after any broken connection: claims come back when
    /// their lease runs out, and completions sent again are recognised as applied.
    ///
    /// Fails with [`OutboxError::InvalidInput`] for zero or more than an hour.
    pub fn call_timeout(mut self, timeout: Duration) -> Result<Self> {
        if timeout.is_zero() || timeout > MAX_CALL_TIMEOUT {
            return Err(OutboxError::invalid(
                "call timeout",
                format!("{timeout:?} is not longer than zero and at most an hour"),
            ));
        }
        self.call_timeout = CallTimeout(timeout);
        Ok(self)
    }

    /// How often a claim walks the pending index from its beginning while batches come
    /// back full ([`outbox_core::DEFAULT_FULL_WALK_EVERY`], 1 s, unless set).
    ///
    /// Other claims start their walk at the oldest pending entry the store's previous
    /// claim took, so that their cost stays bounded by the batch even while a snapshot
    /// held elsewhere keeps every delivered row's index entry (see the crate docs). An
    /// entry that becomes claimable behind that point (committed late with an earlier
    /// creation time, requeued by an operator, its lease expired or released, its
    /// `not_before` come due) is taken by the next walk from the beginning: at once when
    /// the previous claim came up short, within this interval while a backlog keeps
    /// batches full. Zero walks from the beginning on every claim, as far as the spacing
    /// described in the crate docs allows.
    ///
    /// Fails with [`OutboxError::InvalidInput`] for more than an hour.
    pub fn full_walk_every(mut self, every: Duration) -> Result<Self> {
        self.full_walk_every = FullWalkEvery(
            outbox_core::store_kit::claims::check_full_walk_every(every)?,
        );
        Ok(self)
    }

    /// Sends statements as `mode` says ([`StatementMode::Named`] unless set):
    /// [`StatementMode::Unnamed`] where the pool's connections go through a
    /// transaction-mode pooler (PgBouncer, RDS Proxy, Supavisor, pgcat). Give the listener
    /// a connection of its own that bypasses such a pooler, or none (see [`PgListener`]).
    pub fn statement_mode(mut self, mode: StatementMode) -> Self {
        self.statements = mode;
        self
    }

    /// How the store will send its statements.
    pub fn get_statement_mode(&self) -> StatementMode {
        self.statements
    }

    /// How often a claim walks the pending index from its beginning.
    pub fn get_full_walk_every(&self) -> Duration {
        self.full_walk_every.0
    }

    /// The deadline of every store call.
    pub fn get_call_timeout(&self) -> Duration {
        self.call_timeout.0
    }

    /// The configured table.
    pub fn table_name(&self) -> &TableName {
        &self.table
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use outbox_core::DEFAULT_FULL_WALK_EVERY;

    use super::{PgStoreConfig, DEFAULT_CALL_TIMEOUT};

    #[test]
    fn full_walk_intervals_are_checked() {
        let config = PgStoreConfig::new();
        assert_eq!(config.get_full_walk_every(), DEFAULT_FULL_WALK_EVERY);
        let err = config
            .clone()
            .full_walk_every(Duration::from_secs(3601))
            .unwrap_err();
        assert!(err.to_string().contains("full walk interval"), "{err}");
        let set = config.full_walk_every(Duration::ZERO).unwrap();
        assert_eq!(set.get_full_walk_every(), Duration::ZERO);
    }

    #[test]
    fn call_timeouts_are_checked() {
        let config = PgStoreConfig::new();
        assert_eq!(config.get_call_timeout(), DEFAULT_CALL_TIMEOUT);
        let err = config.clone().call_timeout(Duration::ZERO).unwrap_err();
        assert!(err.to_string().contains("call timeout"), "{err}");
        assert!(config
            .clone()
            .call_timeout(Duration::from_secs(3601))
            .is_err());
        let set = config.call_timeout(Duration::from_millis(1)).unwrap();
        assert_eq!(set.get_call_timeout(), Duration::from_millis(1));
    }
}
