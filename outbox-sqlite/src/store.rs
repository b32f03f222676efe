//! [`SqliteClaimStore`]: construction and the selection-only operations.

use std::str::FromStr;
use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use outbox_core::store_kit::normalize_time;
use outbox_core::{
    Capabilities, EntryId, FindRequest, NewEntry, OutboxEntry, OutboxError, OutboxStore,
    PruneRequest, Result, StoreLimits, TableName, TargetState, TransitionOutcome, TransitionResult,
};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Sqlite, SqlitePool};
use uuid::Uuid;

use crate::connection::WriteTx;
use crate::error::map_err;
use crate::row::{decode, micros, opt_micros};
use crate::statements::Statements;
use crate::{SqliteStoreConfig, SqliteWriter};

/// The SQLite claim store: each batch claim is one `UPDATE … RETURNING` statement inside
/// an immediate transaction, so it holds the file's single write lock for exactly one
/// statement and no two workers can ever receive the same row.
///
/// A batch of completions is one statement in one immediate transaction, so each check
/// and its write are atomic (`ConcurrencyLost` cannot happen here).
#[derive(Debug, Clone)]
pub struct SqliteClaimStore {
    pub(crate) pool: SqlitePool,
    pub(crate) sql: Arc<Statements>,
    pub(crate) config: SqliteStoreConfig,
    pub(crate) writer: SqliteWriter,
    /// The table has the indexes claims in per-key order walk.
    pub(crate) ordered: bool,
}

impl SqliteClaimStore {
    /// Opens (creating if missing) the database at `url` (`sqlite://path.db` or a plain
    /// path) in WAL mode with the configured busy timeout, checks that it can be written
    /// and that its schema is at the required version.
    pub async fn open(url: &str, config: SqliteStoreConfig) -> Result<Self> {
        let pool = Self::open_pool(url, &config).await?;
        Self::new(pool, config).await
    }

    /// Opens a pool on `url` the way [`SqliteClaimStore::open`] does, without checking
    /// the schema (for migrating first).
    pub async fn open_pool(url: &str, config: &SqliteStoreConfig) -> Result<SqlitePool> {
        let options = connect_options(url)?
            .busy_timeout(config.busy_timeout)
            .pragma("mmap_size", config.mmap_bytes.to_string())
            .pragma("cache_size", format!("-{}", config.cache_kib));
        let options = if config.read_only {
            options.read_only(true)
        } else {
            options
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Normal)
        };
        // No liveness ping before each acquire (sqlx's default): a connection to a local
        // file does not go stale the way a socket does, and the ping is one more round trip
        // to the connection's thread on every call.
        let pool = SqlitePoolOptions::new()
            .max_connections(config.max_connections)
            .test_before_acquire(false)
            .after_release(crate::connection::returned_outside_a_transaction)
            .connect_with(options)
            .await
            .map_err(|e| OutboxError::Connection {
                message: match crate::error::file_hint(&e) {
                    Some(hint) => format!("cannot open the SQLite database {url:?}: {e} ({hint})"),
                    None => format!("cannot open the SQLite database {url:?}: {e}"),
                },
                source: Some(Box::new(e)),
            })?;
        if config.read_only {
            return Ok(pool);
        }
        // A read-only file or directory only shows itself on the first write: write
        // something in a transaction and roll it back.
        let mut probe = WriteTx::begin(&pool).await?;
        let wrote = sqlx::query("CREATE TABLE outbox_write_probe (x INTEGER)")
            .persistent(false)
            .execute(&mut *probe)
            .await
            .map_err(map_err);
        probe.roll_back(wrote).await?;
        Ok(pool)
    }

    /// A store on an existing pool; fails unless the schema is migrated to the version
    /// this build requires. Configure the pool with WAL and a busy timeout. It claims in
    /// per-key order if the table was prepared for it ([`crate::enable_ordered_claims`]).
    pub async fn new(pool: SqlitePool, config: SqliteStoreConfig) -> Result<Self> {
        crate::check_schema(&pool, &config.table).await?;
        let ordered = crate::ordering::prepared(&pool, &config.table).await?;
        let sql = Arc::new(Statements::render(&config.table));
        let writer = SqliteWriter::rendered(Arc::clone(&sql))
            .limits(config.limits.clone())
            .clock(Arc::clone(&config.clock));
        Ok(Self {
            sql,
            pool,
            config,
            writer,
            ordered,
        })
    }

    /// The pool, for the host's own transactions (see [`SqliteClaimStore::enqueue_in`]).
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// The table this store works on.
    pub fn table(&self) -> &TableName {
        &self.config.table
    }

    pub(crate) fn now(&self, requested: Option<DateTime<Utc>>) -> DateTime<Utc> {
        requested
            .map(normalize_time)
            .unwrap_or_else(|| self.config.clock.now())
    }

    /// Runs `work` on a task of its own and waits for it. A caller that drops the returned
    /// future (a timeout, a shutdown) cancels only its wait: the transaction inside still
    /// commits or rolls back on its own, so no connection goes back to the pool in the middle
    /// of a transaction and no lock outlives the call. Claims made by a cancelled call stay
    /// leased until their lease runs out, then become claimable again.
    pub(crate) async fn detached<T, Fut>(&self, work: impl FnOnce(Self) -> Fut) -> Result<T>
    where
        T: Send + 'static,
        Fut: std::future::Future<Output = Result<T>> + Send + 'static,
    {
        tokio::spawn(work(self.clone()))
            .await
            .map_err(|e| OutboxError::Database {
                message: format!("the store's task failed: {e}"),
                source: Some(Box::new(e)),
            })?
    }

    /// Starts a write transaction that takes the write lock at once (see [`WriteTx`]).
    pub(crate) async fn write_tx(&self) -> Result<WriteTx> {
        WriteTx::begin(&self.pool).await
    }

    pub(crate) async fn fetch_one_entry(
        &self,
        conn: &mut sqlx::SqliteConnection,
        id: EntryId,
    ) -> Result<Option<OutboxEntry>> {
        crate::row::fetch(conn, &self.sql.get, id).await
    }

    async fn find(&self, sql: &str, req: &FindRequest) -> Result<Vec<OutboxEntry>> {
        self.config.limits.check_find(req)?;
        let now = self.now(req.now);
        sqlx::query(sql)
            .bind(micros(now))
            .bind(req.topic.clone())
            .bind(i64::from(req.limit))
            .bind(req.slice.map(|s| i64::from(s.count())))
            .bind(req.slice.map(|s| i64::from(s.index())))
            .fetch_all(&self.pool)
            .await
            .map_err(map_err)?
            .iter()
            .map(decode)
            .collect()
    }
}

/// Parses a `sqlite:` URL or a plain file path.
fn connect_options(url: &str) -> Result<SqliteConnectOptions> {
    let parsed = if url.starts_with("sqlite:") {
        SqliteConnectOptions::from_str(url)
    } else {
        Ok(SqliteConnectOptions::new().filename(url))
    };
    parsed.map_err(|e| OutboxError::invalid("database url", format!("{url:?}: {e}")))
}

/// Binds the outcome fields of `entry` as ?1..?9 of the transition statements.
pub(crate) fn bind_outcome<'q>(
    query: sqlx::query::Query<'q, Sqlite, sqlx::sqlite::SqliteArguments<'q>>,
    entry: &OutboxEntry,
) -> sqlx::query::Query<'q, Sqlite, sqlx::sqlite::SqliteArguments<'q>> {
    query
        .bind(i64::from(entry.status.code()))
        .bind(opt_micros(entry.next_retry_at))
        .bind(i64::from(entry.attempt_count))
        .bind(entry.last_error.clone())
        .bind(entry.dead_letter_reason.clone())
        .bind(opt_micros(entry.delivered_at))
        .bind(entry.provider_message_id.clone())
        .bind(micros(entry.updated_at))
        .bind(entry.stamp.as_bytes().to_vec())
}

#[async_trait]
impl OutboxStore for SqliteClaimStore {
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            name: "sqlite",
            atomic_completion: true,
            notifications: false,
            // One writer at a time, whatever the pool size.
            concurrent_writes: false,
            // Where the table was prepared for it (`enable_ordered_claims`).
            ordered_claims: self.ordered,
            slice_claims: true,
        }
    }

    fn limits(&self) -> &StoreLimits {
        &self.config.limits
    }

    async fn enqueue_batch(&self, entries: Vec<NewEntry>) -> Result<Vec<OutboxEntry>> {
        self.config.limits.check_new_entries(&entries)?;
        self.detached(|store| async move {
            let mut tx = store.write_tx().await?;
            let written = store.writer.insert_all(&mut tx, entries).await;
            tx.finish(written).await
        })
        .await
    }

    async fn get(&self, id: EntryId) -> Result<Option<OutboxEntry>> {
        let mut conn = self.pool.acquire().await.map_err(map_err)?;
        self.fetch_one_entry(&mut conn, id).await
    }

    async fn find_pending(&self, req: &FindRequest) -> Result<Vec<OutboxEntry>> {
        self.find(self.sql.find_pending.pick(req.slice.is_some()), req)
            .await
    }

    async fn find_retry_ready(&self, req: &FindRequest) -> Result<Vec<OutboxEntry>> {
        self.find(self.sql.find_retry_ready.pick(req.slice.is_some()), req)
            .await
    }

    async fn save(
        &self,
        entry: &OutboxEntry,
        now: Option<DateTime<Utc>>,
    ) -> Result<TransitionResult> {
        let entry = entry.clone();
        self.detached(move |store| async move { store.save_now(&entry, now).await })
            .await
    }

    async fn prune_delivered(&self, req: &PruneRequest) -> Result<u64> {
        self.config.limits.check_prune(req)?;
        let req = req.clone();
        self.detached(move |store| async move { store.prune_now(&req).await })
            .await
    }
}

impl SqliteClaimStore {
    async fn save_now(
        &self,
        entry: &OutboxEntry,
        now: Option<DateTime<Utc>>,
    ) -> Result<TransitionResult> {
        let now = self.now(now);
        let mut target = entry.clone();
        TargetState::from_entry(entry).apply_to(&mut target, now, Uuid::new_v4());
        let mut tx = self.write_tx().await?;
        let result = self.save_in(&mut tx, entry, &target).await;
        tx.finish(result).await
    }

    /// The stamp-checked write of `target` over `entry`, and its judgement when refused.
    async fn save_in(
        &self,
        conn: &mut sqlx::SqliteConnection,
        entry: &OutboxEntry,
        target: &OutboxEntry,
    ) -> Result<TransitionResult> {
        let written = bind_outcome(sqlx::query(&self.sql.save_stamped), target)
            .bind(entry.id.as_uuid().as_bytes().to_vec())
            .bind(entry.stamp.as_bytes().to_vec())
            .fetch_optional(&mut *conn)
            .await
            .map_err(map_err)?;
        Ok(match written {
            Some(row) => TransitionResult::new(TransitionOutcome::Applied, decode(&row)?),
            None => match self.fetch_one_entry(conn, entry.id).await? {
                None => TransitionResult::new(TransitionOutcome::Missing, entry.clone()),
                Some(row) if row.status.is_terminal() => {
                    TransitionResult::new(TransitionOutcome::Terminal, row)
                }
                Some(row) => TransitionResult::new(TransitionOutcome::ConcurrencyLost, row),
            },
        })
    }

    async fn prune_now(&self, req: &PruneRequest) -> Result<u64> {
        let mut tx = self.write_tx().await?;
        let done = sqlx::query(&self.sql.prune_delivered)
            .bind(micros(normalize_time(req.delivered_before)))
            .bind(i64::from(req.batch_size))
            .execute(&mut *tx)
            .await
            .map_err(map_err);
        tx.finish(done).await.map(|d| d.rows_affected())
    }
}
