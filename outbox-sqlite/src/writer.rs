//! [`SqliteWriter`]: writing outbox entries on a connection the host holds, inside its
//! transaction, without a pool or a store.

use std::sync::Arc;

use outbox_core::{
    Clock, EntryId, NewEntry, OutboxEntry, OutboxError, Result, StoreLimits, SystemClock, TableName,
};
use sqlx::{Connection, SqliteConnection};

use outbox_core::store_kit::writes::{first_duplicate, insert_chunks, wrote_all};

use crate::batch_params::{self, NewRow};
use crate::error::map_err;
use crate::row::{micros, opt_micros};
use crate::statements::Statements;

/// Writes new entries on the host's own SQLite connection or transaction, so they commit
/// or roll back with its business rows: one statement per 500 entries.
///
/// It needs no pool and makes no call when built: a service whose drain runs elsewhere
/// builds one from the table's name; a store hands out its own with
/// [`crate::SqliteClaimStore::writer`]. Cheap to clone.
///
/// Begin the host's transaction with `BEGIN IMMEDIATE`: a deferred transaction that
/// reads before it writes fails with `SQLITE_BUSY_SNAPSHOT` (at once, whatever the busy
/// timeout) when another connection wrote in between, while an immediate one takes the
/// write lock at its start and makes other writers wait for it.
///
/// Input is validated before anything is written. The entries are written under a
/// savepoint, so a refused batch (an id that already exists fails with
/// [`OutboxError::DuplicateId`]) leaves nothing of itself and the host's transaction
/// stays usable.
///
/// A full disk (`SQLITE_FULL`) or an I/O error is different: SQLite may then roll the
/// host's whole transaction back on its own, and sqlx, which does not see it, goes on
/// counting the transaction as open, so the host's `rollback()` fails too. Pools opened by
/// [`crate::SqliteClaimStore::open_pool`] close such a connection when it comes back
/// instead of lending it again; on a pool of the host's own, begin on a connection you
/// acquired and close it (`PoolConnection::close`) after a failed `COMMIT` or `ROLLBACK`,
/// or every later `begin_with` on it fails.
#[derive(Debug, Clone)]
pub struct SqliteWriter {
    sql: Arc<Statements>,
    limits: StoreLimits,
    clock: Arc<dyn Clock>,
}

impl SqliteWriter {
    /// A writer for `table` with the default limits and the system clock.
    pub fn new(table: &TableName) -> Self {
        Self::rendered(Arc::new(Statements::render(table)))
    }

    pub(crate) fn rendered(sql: Arc<Statements>) -> Self {
        Self {
            sql,
            limits: StoreLimits::default(),
            clock: Arc::new(SystemClock),
        }
    }

    /// Enforces `limits` on what it writes (use the store's, so both refuse the same).
    pub fn limits(mut self, limits: StoreLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Stamps `created_at` from `clock` (the store's, so both agree).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Writes `entries` on `conn` (a connection, or a transaction through `&mut *tx`), in
    /// input order, and returns them as written.
    ///
    /// ```no_run
    /// # async fn demo(pool: sqlx::SqlitePool) -> Result<(), Box<dyn std::error::Error>> {
    /// use outbox_core::{NewEntry, TableName};
    /// let writer = outbox_sqlite::SqliteWriter::new(&TableName::new("outbox")?);
    /// let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
    /// // sqlx::query("INSERT INTO orders …").execute(&mut *tx).await?;
    /// writer.enqueue_in(&mut tx, vec![NewEntry::new("orders.created", b"{}".to_vec())]).await?;
    /// tx.commit().await?;
    /// # Ok(()) }
    /// ```
    pub async fn enqueue_in(
        &self,
        conn: &mut SqliteConnection,
        entries: Vec<NewEntry>,
    ) -> Result<Vec<OutboxEntry>> {
        self.limits.check_new_entries(&entries)?;
        let mut savepoint = conn.begin().await.map_err(map_err)?;
        match self.insert_all(&mut savepoint, entries).await {
            Ok(written) => {
                savepoint.commit().await.map_err(map_err)?;
                Ok(written)
            }
            Err(e) => {
                // Awaited rather than left to the drop, so sqlx's count of open
                // transactions is right when this returns; see `crate::connection` for
                // the case it cannot be (SQLite ended the host's transaction itself).
                if let Err(undo) = savepoint.rollback().await {
                    tracing::warn!(error = %undo, "rolling back a refused enqueue failed; the host's transaction is gone");
                }
                Err(e)
            }
        }
    }

    /// Inserts already-validated entries on `conn` with one statement per chunk; the
    /// caller owns the transaction. A duplicate id fails the statement as a whole (nothing
    /// of it is written) and is then located by reading, to name it in the error.
    pub(crate) async fn insert_all(
        &self,
        conn: &mut SqliteConnection,
        entries: Vec<NewEntry>,
    ) -> Result<Vec<OutboxEntry>> {
        let now = self.clock.now();
        let written: Vec<OutboxEntry> = entries
            .into_iter()
            .map(|new| OutboxEntry::from_new(new, now))
            .collect();
        for chunk in insert_chunks(&written, CHUNK_BYTES) {
            if let [one] = chunk {
                self.insert_one(conn, one).await?;
                continue;
            }
            let rows = chunk.iter().map(NewRow::new).collect::<Result<Vec<_>>>()?;
            let batch = batch_params::array(&rows)?;
            drop(rows);
            let inserted = sqlx::query(&self.sql.enqueue)
                .bind(batch)
                .execute(&mut *conn)
                .await;
            match inserted {
                Ok(done) => wrote_all(done.rows_affected(), chunk.len())?,
                Err(sqlx::Error::Database(db)) if db.is_unique_violation() => {
                    return Err(self.first_duplicate(conn, chunk).await);
                }
                Err(e) => return Err(map_err(e)),
            }
        }
        Ok(written)
    }

    /// One entry with its own statement: for a single entry, binding the columns costs less
    /// than building and parsing the JSON form.
    async fn insert_one(&self, conn: &mut SqliteConnection, e: &OutboxEntry) -> Result<()> {
        let headers = serde_json::to_string(&e.headers)
            .map_err(|err| OutboxError::invalid("headers", err.to_string()))?;
        let inserted = sqlx::query(&self.sql.enqueue_one)
            .bind(e.id.as_uuid().as_bytes().to_vec())
            .bind(e.topic.clone())
            .bind(e.partition_key.clone())
            .bind(e.payload.clone())
            .bind(headers)
            .bind(micros(e.created_at))
            .bind(opt_micros(e.not_before))
            .bind(e.stamp.as_bytes().to_vec())
            .bind(i64::from(e.slice_hash()))
            .execute(&mut *conn)
            .await;
        match inserted {
            Ok(done) => wrote_all(done.rows_affected(), 1),
            Err(sqlx::Error::Database(db)) if db.is_unique_violation() => {
                Err(OutboxError::DuplicateId(e.id))
            }
            Err(err) => Err(map_err(err)),
        }
    }

    /// The error naming the first entry of `chunk` whose id is already taken.
    async fn first_duplicate(
        &self,
        conn: &mut SqliteConnection,
        chunk: &[OutboxEntry],
    ) -> OutboxError {
        let conn = std::sync::Arc::new(tokio::sync::Mutex::new(conn));
        first_duplicate(chunk, |id| {
            let conn = std::sync::Arc::clone(&conn);
            async move {
                let mut conn = conn.lock().await;
                Ok(self.fetch(&mut conn, id).await?.is_some())
            }
        })
        .await
    }

    async fn fetch(&self, conn: &mut SqliteConnection, id: EntryId) -> Result<Option<OutboxEntry>> {
        crate::row::fetch(conn, &self.sql.get, id).await
    }
}

/// Payload bytes per insert statement, at most (a larger entry goes alone), so one JSON
/// document stays a few megabytes whatever the payloads.
const CHUNK_BYTES: usize = 2 * 1024 * 1024;
