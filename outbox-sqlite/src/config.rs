//! How a SQLite store is built.

use std::sync::Arc;
use std::time::Duration;

use outbox_core::store_kit::config::StoreBasics;
use outbox_core::{Clock, StoreLimits, TableName};

/// Settings of a [`crate::SqliteClaimStore`], as a builder with defaults.
#[derive(Debug, Clone)]
pub struct SqliteStoreConfig {
    pub(crate) basics: StoreBasics,
    pub(crate) busy_timeout: Duration,
    pub(crate) cache_kib: u32,
    pub(crate) mmap_bytes: u64,
    pub(crate) read_only: bool,
}

impl Default for SqliteStoreConfig {
    fn default() -> Self {
        Self {
            basics: StoreBasics::default(),
            busy_timeout: Duration::from_secs(5),
            cache_kib: 16 * 1024,
            mmap_bytes: 256 * 1024 * 1024,
            read_only: false,
        }
    }
}

impl SqliteStoreConfig {
    /// Defaults: table `outbox`, default limits, the system clock, a 5 s busy timeout,
    /// up to 8 pooled connections, a 16 MiB page cache and a 256 MiB memory map per
    /// connection (for [`crate::SqliteClaimStore::open`]).
    pub fn new() -> Self {
        Self::default()
    }

    /// Uses another table (and, for an attached database, schema).
    pub fn table(mut self, table: TableName) -> Self {
        self.basics.table = table;
        self
    }

    /// Enforces `limits` on every call.
    pub fn limits(mut self, limits: StoreLimits) -> Self {
        self.basics.limits = limits;
        self
    }

    /// Reads the current time from `clock` when a request carries no `now`.
    ///
    /// SQLite runs inside the host process, so the host's clock is the database's clock:
    /// every process sharing the file (WAL needs them on one machine) reads the same one.
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.basics.clock = clock;
        self
    }

    /// How long a writer waits for another writer's lock before failing with
    /// [`outbox_core::OutboxError::Conflict`]: the pool's (when
    /// [`crate::SqliteClaimStore::open`] opens it) and the store's own connection's.
    pub fn busy_timeout(mut self, timeout: Duration) -> Self {
        self.busy_timeout = timeout;
        self
    }

    /// The pool size used by [`crate::SqliteClaimStore::open`] (at least 1).
    pub fn max_connections(mut self, n: u32) -> Self {
        self.basics.set_max_connections(n);
        self
    }

    /// Each connection's page cache (the pool's and the store's own), KiB (`PRAGMA cache_size`; 16 MiB by default,
    /// SQLite's own default is 2 MiB). A queue's working set is its head: the cache keeps
    /// it, and the partial indexes, out of the file reads a drain would otherwise make.
    pub fn cache_kib(mut self, kib: u32) -> Self {
        self.cache_kib = kib;
        self
    }

    /// Opens the file for reading only ([`crate::SqliteClaimStore::open`]): no file is
    /// created, no write is tried at open, the journal mode is left as it is, and every
    /// write fails with SQLite's read-only error. For inspecting a file this process may
    /// not (or must not) write.
    pub fn read_only(mut self, on: bool) -> Self {
        self.read_only = on;
        self
    }

    /// How much of the file each connection reads through a memory map (`PRAGMA
    /// mmap_size`; 256 MiB by default, 0 turns it off): pages are then shared with the OS
    /// cache instead of copied by a read call each. Turn it off where an I/O error must
    /// surface as an error rather than a signal (network file systems).
    pub fn mmap_bytes(mut self, bytes: u64) -> Self {
        self.mmap_bytes = bytes;
        self
    }
}
