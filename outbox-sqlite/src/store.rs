//! [`SqliteClaimStore`]: construction, its pool, table and writer.

use std::str::FromStr;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use outbox_core::{EntryId, OutboxEntry, OutboxError, Result, TableName};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::SqlitePool;

use crate::connection::WriteTx;
use crate::direct::{Direct, Opener};
use crate::error::map_err;
use crate::statements::Statements;
use crate::{SqliteStoreConfig, SqliteWriter};

/// The SQLite claim store: each batch claim is one `UPDATE … RETURNING` statement inside
/// an immediate transaction, so it holds the file's single write lock for exactly one
/// statement and no two workers can ever receive the same row.
///
/// Claims, completions and renewals run on a connection of the store's own, on a thread
/// of its own, opened on the same file as the pool's; everything else (enqueue, operator
/// calls, the host's transactions) runs on the pool.
///
/// A batch of completions is one statement in one immediate transaction, so each check
/// and its write are atomic (`ConcurrencyLost` cannot happen here).
#[derive(Debug, Clone)]
pub struct SqliteClaimStore {
    pub(crate) pool: SqlitePool,
    pub(crate) sql: Arc<Statements>,
    pub(crate) config: SqliteStoreConfig,
    pub(crate) writer: SqliteWriter,
    /// The store's own connection, for claims, completions and renewals.
    pub(crate) direct: Direct,
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
            .pragma("cache_size", format!("-{}", config.cache_kib))
            // A claim's rows cross from the connection's thread in one go when the
            // channel holds a whole batch (sqlx's default of 50 wakes the caller again
            // every 50 rows), up to batches of 1,024.
            .row_buffer_size((config.basics.limits.max_batch_size as usize).clamp(50, 1024));
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
            .max_connections(config.basics.max_connections)
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
    ///
    /// The store opens one more connection of its own on the file the pool's connections
    /// have open (with their attached databases), for claims, completions and renewals,
    /// with `config`'s busy timeout, cache and memory map. The database must be a file:
    /// an in-memory one is refused as bad input.
    pub async fn new(pool: SqlitePool, config: SqliteStoreConfig) -> Result<Self> {
        crate::check_schema(&pool, &config.basics.table).await?;
        let ordered = crate::ordering::prepared(&pool, &config.basics.table).await?;
        if ordered {
            crate::ordering::warn_of_an_earlier_status_trigger(&pool, &config.basics.table).await?;
        }
        let opener = Opener::of_pool(&pool, &config).await?;
        let writes = !opener.read_only();
        let direct = Direct::start(opener).await?;
        if writes {
            crate::direct::shared_locks::check(&pool, &direct).await?;
        }
        let sql = Arc::new(Statements::render(&config.basics.table));
        let writer = SqliteWriter::rendered(Arc::clone(&sql))
            .limits(config.basics.limits.clone())
            .clock(Arc::clone(&config.basics.clock));
        Ok(Self {
            sql,
            pool,
            config,
            writer,
            direct,
            ordered,
        })
    }

    /// The pool, for the host's own transactions (see [`SqliteClaimStore::writer`]).
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// The table this store works on.
    pub fn table(&self) -> &TableName {
        &self.config.basics.table
    }

    /// The store's writer: the same table, limits and clock, for writing entries in the
    /// host's own transactions (see [`SqliteWriter`]).
    ///
    /// ```no_run
    /// # async fn demo(store: outbox_sqlite::SqliteClaimStore) -> Result<(), Box<dyn std::error::Error>> {
    /// let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    /// // sqlx::query("INSERT INTO orders …").execute(&mut *tx).await?;
    /// let entries = vec![outbox_core::NewEntry::new("orders.created", b"{}".to_vec())];
    /// store.writer().enqueue_in(&mut tx, entries).await?;
    /// tx.commit().await?;
    /// # Ok(()) }
    /// ```
    pub fn writer(&self) -> &SqliteWriter {
        &self.writer
    }

    pub(crate) fn now(&self, requested: Option<DateTime<Utc>>) -> DateTime<Utc> {
        self.config.basics.now(requested)
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
