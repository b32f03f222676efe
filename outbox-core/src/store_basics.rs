//! The settings a pooled SQL store's config holds when the store opens its own pool
//! (SQLite, MariaDB): its table, the limits it enforces, the clock it reads when a
//! request carries no time, and its pool size.

use std::sync::Arc;

use chrono::{DateTime, Utc};

use crate::{Clock, StoreLimits, SystemClock, TableName};

/// The pool size a store opens with unless told otherwise.
pub const DEFAULT_MAX_CONNECTIONS: u32 = 8;

/// The settings a store's config holds when the store opens its own pool (the SQLite and
/// MariaDB configs); the engine's config adds its own and offers a builder method for
/// each. (PostgreSQL and SQL Server keep theirs apart: their pools are built otherwise.)
#[derive(Debug, Clone)]
pub struct StoreBasics {
    /// The outbox table.
    pub table: TableName,
    /// What every call is checked against.
    pub limits: StoreLimits,
    /// Read when a request carries no `now`.
    pub clock: Arc<dyn Clock>,
    /// The pool size (at least 1).
    pub max_connections: u32,
}

impl Default for StoreBasics {
    fn default() -> Self {
        Self {
            table: TableName::default(),
            limits: StoreLimits::default(),
            clock: Arc::new(SystemClock),
            max_connections: DEFAULT_MAX_CONNECTIONS,
        }
    }
}

impl StoreBasics {
    /// Sets the pool size; 0 is taken as 1.
    pub fn set_max_connections(&mut self, n: u32) {
        self.max_connections = n.max(1);
    }

    /// The time a request asked for (at the precision every store keeps), or the clock's.
    pub fn now(&self, requested: Option<DateTime<Utc>>) -> DateTime<Utc> {
        requested
            .map(crate::clock::normalize)
            .unwrap_or_else(|| self.clock.now())
    }
}
