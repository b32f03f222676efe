//! [`PortableStore`]: its state, construction, and the helpers its operations share.

#[cfg(feature = "test-hooks")]
use std::future::Future;
#[cfg(feature = "test-hooks")]
use std::pin::Pin;
use std::sync::Arc;

use chrono::{DateTime, Utc};

use crate::clock::normalize;
use crate::{Capabilities, EntryId, OutboxError, Result, StoreLimits, TableName};

use super::backend::{ClockedEntry, PortableBackend, SqlParam};
use super::statements::Statements;
use super::PortableConfig;
use crate::store_kit::per_row::Interleave;

/// The portable claim store: per-row optimistic concurrency on any database it has a
/// [`PortableBackend`] for, through sqlx.
///
/// A claim of N rows costs 1 + 2N commands (one ordered candidate query, then a re-read
/// and a stamp-checked update per row); a completion costs 2 per claim. It uses no
/// engine-specific locking, which makes it the baseline the optimized stores are measured
/// against, and lets a host switch between it and an optimized store on the same table.
///
/// Its completions check and write in separate steps, so a completion can come back
/// [`ConcurrencyLost`](crate::TransitionOutcome::ConcurrencyLost). Times come from the
/// database's clock unless a request carries its own `now`. Wrap it in
/// [`Observed`](crate::Observed) to count and log transitions.
///
/// It has no deadline of its own: wrap it in [`Bounded`](crate::Bounded). A call dropped
/// before its end (a deadline, a cancelled task) closes the connection it held rather
/// than returning it to the pool. Each of its row writes commits on its own, so the rows
/// such a call had already written stay written: leased rows come back when their lease
/// runs out, and a completion sent again is applied once.
pub struct PortableStore<B: PortableBackend> {
    pub(super) backend: Arc<B>,
    pub(super) sql: Arc<Statements>,
    pub(super) limits: StoreLimits,
    table: TableName,
    pub(super) interleave: Interleave,
}

impl<B: PortableBackend> Clone for PortableStore<B> {
    fn clone(&self) -> Self {
        Self {
            backend: Arc::clone(&self.backend),
            sql: Arc::clone(&self.sql),
            limits: self.limits.clone(),
            table: self.table.clone(),
            interleave: self.interleave.clone(),
        }
    }
}

impl<B: PortableBackend> std::fmt::Debug for PortableStore<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PortableStore")
            .field("backend", &B::NAME)
            .field("table", &self.table.qualified())
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl<B: PortableBackend> PortableStore<B> {
    /// Builds the store on `backend` (an engine's pool), after checking that the
    /// configured table exists ([`OutboxError::SchemaNotMigrated`] when it does not).
    pub async fn new(backend: B, config: PortableConfig) -> Result<Self> {
        let sql = Statements::render(&config.table, &B::DIALECT);
        let store = Self {
            backend: Arc::new(backend),
            sql: Arc::new(sql),
            limits: config.limits,
            table: config.table,
            interleave: Interleave::default(),
        };
        let mut conn = store.connection().await?;
        B::execute(&mut conn, &store.sql.probe_table, Vec::new())
            .await
            .map_err(|e| match e {
                OutboxError::SchemaNotMigrated { detail } => OutboxError::SchemaNotMigrated {
                    detail: format!("{}: {detail}", store.table.qualified()),
                },
                other => other,
            })?;
        Ok(store)
    }

    /// The engine's side of the store (its pool).
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// The outbox table.
    pub fn table(&self) -> &TableName {
        &self.table
    }

    /// For tests only: runs `writer` exactly once, inside the next claim or completion of
    /// this store (or a clone of it), after that row's check and before its guarded write.
    ///
    /// It lets a test put a competing writer into the window this store's per-row
    /// concurrency leaves open, deterministically. The writer may use this store; the
    /// pool then needs a second connection, since the interrupted call keeps its own.
    #[cfg(feature = "test-hooks")]
    pub fn interleave_before_next_write(
        &self,
        writer: Pin<Box<dyn Future<Output = ()> + Send + 'static>>,
    ) {
        self.interleave.arm(writer);
    }

    pub(super) fn capabilities_of() -> Capabilities {
        Capabilities {
            name: B::NAME,
            atomic_completion: false,
            notifications: false,
            concurrent_writes: B::CONCURRENT_WRITES,
            // Both judged by the candidate query on any table of the current schema (see
            // claim.rs); an ordered claim's key check is a seek once the table is prepared
            // for ordered claims by its engine's store.
            ordered_claims: true,
            key_runs: false,
            slice_claims: true,
        }
    }

    /// One pooled connection, held for a whole call so that its commands do not each pay
    /// for a pool checkout. Hand it back with [`Lease::finish`] once the call's last
    /// statement has answered.
    pub(super) async fn connection(&self) -> Result<Lease<B>> {
        let conn = self.backend.acquire().await?;
        Ok(Lease {
            conn,
            finished: false,
        })
    }

    /// Reads one row together with `now` (or the database's clock when `None`).
    pub(super) async fn read(
        &self,
        conn: &mut B::Connection,
        id: EntryId,
        now: Option<DateTime<Utc>>,
    ) -> Result<Option<ClockedEntry>> {
        let params = vec![SqlParam::Time(now.map(normalize)), id.into()];
        let mut rows = B::fetch_entries(conn, &self.sql.read_entry, params).await?;
        Ok(rows.pop().map(|(at, entry)| (normalize(at), entry)))
    }

    /// `now` when given, else one read of the database's clock.
    pub(super) async fn clock(
        &self,
        conn: &mut B::Connection,
        now: Option<DateTime<Utc>>,
    ) -> Result<DateTime<Utc>> {
        match now {
            Some(at) => Ok(normalize(at)),
            None => {
                let at = B::fetch_clock(conn, &self.sql.clock, vec![SqlParam::Time(None)]).await?;
                Ok(normalize(at))
            }
        }
    }
}

/// A pooled connection lent to one call. Dropped without [`Lease::finish`], the call was
/// abandoned (its future dropped by a deadline or a cancelled task), perhaps with a
/// statement still waiting for its answer: the connection is then closed, not returned.
/// Returned, the driver (sqlx) would first wait for that answer, with no bound, which a server that
/// stopped answering never sends, and the pool would lose the connection for as long as
/// the kernel keeps the socket.
///
/// Finished, it is still closed if sqlx counts a transaction open on it. After a failed
/// `COMMIT` (on SQLite: `SQLITE_FULL`, which makes SQLite roll the transaction back
/// itself) the driver's count (sqlx's) stays up, the rollback it queues fails, and returned, the
/// connection would refuse every later `begin_with` for the rest of the process (#30).
pub(super) struct Lease<B: PortableBackend> {
    conn: B::Lease,
    finished: bool,
}

impl<B: PortableBackend> Lease<B> {
    /// Ends the call that held it, passing its `result` through: every statement has
    /// answered (with rows or an error), so the connection goes back to the pool, unless
    /// it is still inside a transaction.
    pub(super) fn finish<T>(mut self, result: T) -> T {
        self.finished = !B::in_transaction(&self.conn);
        result
    }
}

impl<B: PortableBackend> std::ops::Deref for Lease<B> {
    type Target = B::Connection;

    fn deref(&self) -> &Self::Target {
        &self.conn
    }
}

impl<B: PortableBackend> std::ops::DerefMut for Lease<B> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.conn
    }
}

impl<B: PortableBackend> Drop for Lease<B> {
    fn drop(&mut self) {
        if !self.finished {
            B::close_on_drop(&mut self.conn);
        }
    }
}
