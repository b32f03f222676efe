//! [`MySqlClaimStore`]: construction, its pool, table and writer.

use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use outbox_core::{OutboxError, Result, TableName};
use sqlx::mysql::MySqlPoolOptions;
use sqlx::{Executor, MySqlPool};

use crate::connection::{check_isolation, connect_options, max_allowed_packet};
use crate::statements::Statements;
use crate::{MySqlStoreConfig, MySqlWriter};

/// The MariaDB / MySQL claim store.
///
/// A batch claim is one short `READ COMMITTED` transaction of a fixed number of
/// statements whatever the batch size: a locking read of the batch that skips rows other
/// transactions hold (`FOR UPDATE SKIP LOCKED`, walking an index in claim order and
/// stopping after the batch), one `UPDATE` that leases every row it locked, and the
/// commit. Retry-ready rows come first (one more read when both groups are claimed). No
/// two workers can receive the same row, and a claim never waits for another's.
///
/// A batch of completions is one `UPDATE` joined with the batch (`JSON_TABLE`) that
/// writes every row still held by its claim, in a transaction; when it wrote fewer rows
/// than it was given, the batch's rows are read before the commit and each refusal is
/// judged on the durable row. Each check and its write are one statement, so
/// `ConcurrencyLost` cannot happen. Renewals work the same way.
///
/// Requires MariaDB 10.6+ or MySQL 8.0+ (`SKIP LOCKED`, `JSON_TABLE`) with InnoDB.
#[derive(Debug, Clone)]
pub struct MySqlClaimStore {
    pub(crate) pool: MySqlPool,
    pub(crate) sql: Arc<Statements>,
    pub(crate) config: MySqlStoreConfig,
    pub(crate) writer: MySqlWriter,
    /// When a claim in key order next walks the whole backlog (walks.rs).
    pub(crate) whole_walks: Arc<crate::walks::WholeWalks>,
    /// How many rows a head brought in the last claim in key runs (run_lengths.rs).
    pub(crate) run_lengths: Arc<crate::run_lengths::RunLengths>,
    /// How many calls were run again after the server rolled them back.
    pub(crate) retried: Arc<AtomicU64>,
}

impl MySqlClaimStore {
    /// Connects to `url` (`mysql://user:password@host:port/database`, `mariadb://` is
    /// taken as the same) with a pool whose sessions run `READ COMMITTED`, and
    /// checks that the schema is at the required version.
    pub async fn open(url: &str, config: MySqlStoreConfig) -> Result<Self> {
        let pool = Self::open_pool(url, &config).await?;
        Self::new(pool, config).await
    }

    /// Opens a pool on `url` the way [`MySqlClaimStore::open`] does, without checking
    /// the schema (for migrating first).
    pub async fn open_pool(url: &str, config: &MySqlStoreConfig) -> Result<MySqlPool> {
        let options = connect_options(url)?;
        let session = include_str!("../sql/session.sql");
        MySqlPoolOptions::new()
            .max_connections(config.basics.max_connections)
            .acquire_timeout(config.acquire_timeout)
            .after_connect(move |conn, _| {
                Box::pin(async move { conn.execute(session).await.map(drop) })
            })
            .connect_with(options)
            .await
            .map_err(|e| OutboxError::Connection {
                message: format!(
                    "cannot connect to MariaDB / MySQL at {}: {e}",
                    outbox_core::redact_url(url)
                ),
                source: Some(Box::new(e)),
            })
    }

    /// A store on an existing pool; fails unless the schema is migrated to the version
    /// this build requires and the pool's sessions run `READ COMMITTED` (set it in the
    /// pool's `after_connect`, as [`MySqlClaimStore::open_pool`] does: under `REPEATABLE
    /// READ`, InnoDB's default, a claim's locking read takes gap locks that block
    /// concurrent enqueues).
    pub async fn new(pool: MySqlPool, config: MySqlStoreConfig) -> Result<Self> {
        crate::check_schema(&pool, &config.basics.table).await?;
        check_isolation(&pool).await?;
        let sql = Arc::new(Statements::render(&config.basics.table));
        let packet = max_allowed_packet(&pool).await?;
        let writer = MySqlWriter::rendered(Arc::clone(&sql))
            .limits(config.basics.limits.clone())
            .clock(Arc::clone(&config.basics.clock))
            .max_statement_bytes(packet);
        Ok(Self {
            pool,
            sql,
            config,
            writer,
            whole_walks: Arc::default(),
            run_lengths: Arc::default(),
            retried: Arc::default(),
        })
    }

    /// The pool, for the host's own transactions (see [`MySqlClaimStore::writer`]).
    pub fn pool(&self) -> &MySqlPool {
        &self.pool
    }

    /// The table this store works on.
    pub fn table(&self) -> &TableName {
        &self.config.basics.table
    }

    /// The store's writer: the same table, limits and clock, for writing entries in the
    /// host's own transactions (see [`MySqlWriter`]).
    ///
    /// ```no_run
    /// # async fn demo(store: outbox_mysql::MySqlClaimStore) -> Result<(), Box<dyn std::error::Error>> {
    /// let mut tx = store.pool().begin().await?;
    /// // sqlx::query("INSERT INTO orders …").execute(&mut *tx).await?;
    /// let entries = vec![outbox_core::NewEntry::new("orders.created", b"{}".to_vec())];
    /// store.writer().enqueue_in(&mut tx, entries).await?;
    /// tx.commit().await?;
    /// # Ok(()) }
    /// ```
    pub fn writer(&self) -> &MySqlWriter {
        &self.writer
    }

    /// The time a request records: its own, or the configured clock's.
    pub(crate) fn now(&self, requested: Option<DateTime<Utc>>) -> DateTime<Utc> {
        self.config.basics.now(requested)
    }

    /// Runs `transaction` by the store's [`outbox_core::ConflictRetry`]: again, after a
    /// short random pause, when InnoDB rolled it back as a deadlock victim or its lock
    /// wait timed out (the server undid it whole, so running it again is safe).
    pub(crate) async fn retrying<T, F, Fut>(&self, transaction: F) -> Result<T>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T>>,
    {
        self.config
            .conflict_retry
            .run(&self.retried, transaction)
            .await
    }

    /// Runs `work` on a task of its own (`store_kit::writes::detached`): a caller that drops
    /// the call cancels only its wait, never a transaction half-way. Claims made by a
    /// cancelled call stay leased until their lease runs out, then become claimable again.
    pub(crate) async fn detached<T, Fut>(&self, work: impl FnOnce(Self) -> Fut) -> Result<T>
    where
        T: Send + 'static,
        Fut: std::future::Future<Output = Result<T>> + Send + 'static,
    {
        outbox_core::store_kit::writes::detached(self, work).await
    }
}
