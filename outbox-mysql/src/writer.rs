//! [`MySqlWriter`]: writing outbox entries on a connection the host holds, inside its
//! transaction, without a pool or a store.

use std::sync::Arc;

use outbox_core::{
    Clock, NewEntry, OutboxEntry, OutboxError, Result, StoreLimits, SystemClock, TableName,
};
use sqlx::{Connection, MySqlConnection};

use outbox_core::store_kit::writes::{first_duplicate, insert_chunks, wrote_all};

use crate::error::{is_duplicate, map_err};
use crate::statements::Statements;

/// Writes new entries on the host's own MariaDB / MySQL connection or transaction, so they
/// commit or roll back with its business rows: one multi-row `INSERT` per chunk of up to
/// 500 entries, cut smaller where the payloads would make a statement longer than the
/// server's `max_allowed_packet` allows.
///
/// It needs no pool and makes no call when built: a service whose drain runs elsewhere
/// builds one from the table's name; a store hands out its own with
/// [`crate::MySqlClaimStore::writer`] (which knows the server's packet size).
/// Cheap to clone.
///
/// Input is validated before anything is written. The entries are written under a
/// savepoint, so a refused batch (an id that already exists fails with
/// [`OutboxError::DuplicateId`]) leaves nothing of itself and the host's transaction stays
/// usable. Inserts take no gap locks under `READ COMMITTED`; under `REPEATABLE READ` (the
/// server's default) they still never wait for a claim, whose locking reads run
/// `READ COMMITTED` in sessions of their own.
#[derive(Debug, Clone)]
pub struct MySqlWriter {
    sql: Arc<Statements>,
    limits: StoreLimits,
    clock: Arc<dyn Clock>,
    chunk_bytes: usize,
}

/// Payload bytes per insert statement, at most, when the server's packet size is unknown
/// or larger (a larger entry goes alone).
const CHUNK_BYTES: usize = 4 * 1024 * 1024;

impl MySqlWriter {
    /// A writer for `table` with the default limits and the system clock.
    pub fn new(table: &TableName) -> Self {
        Self::rendered(Arc::new(Statements::render(table)))
    }

    pub(crate) fn rendered(sql: Arc<Statements>) -> Self {
        Self {
            sql,
            limits: StoreLimits::default(),
            clock: Arc::new(SystemClock),
            chunk_bytes: CHUNK_BYTES,
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

    /// Keeps each statement within `bytes` (the server's `max_allowed_packet`): chunks
    /// carry at most half of it in payloads.
    pub fn max_statement_bytes(mut self, bytes: usize) -> Self {
        self.chunk_bytes = CHUNK_BYTES.min(bytes / 2).max(1);
        self
    }

    /// Writes `entries` on `conn` (a connection, or a transaction through `&mut *tx`), in
    /// input order, and returns them as written.
    ///
    /// ```no_run
    /// # async fn demo(pool: sqlx::MySqlPool) -> Result<(), Box<dyn std::error::Error>> {
    /// use outbox_core::{NewEntry, TableName};
    /// let writer = outbox_mysql::MySqlWriter::new(&TableName::new("outbox")?);
    /// let mut tx = pool.begin().await?;
    /// // sqlx::query("INSERT INTO orders …").execute(&mut *tx).await?;
    /// writer.enqueue_in(&mut tx, vec![NewEntry::new("orders.created", b"{}".to_vec())]).await?;
    /// tx.commit().await?;
    /// # Ok(()) }
    /// ```
    pub async fn enqueue_in(
        &self,
        conn: &mut MySqlConnection,
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
                if let Err(undo) = savepoint.rollback().await {
                    tracing::warn!(error = %undo, "rolling back a refused enqueue failed");
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
        conn: &mut MySqlConnection,
        entries: Vec<NewEntry>,
    ) -> Result<Vec<OutboxEntry>> {
        let now = self.clock.now();
        let written: Vec<OutboxEntry> = entries
            .into_iter()
            .map(|new| OutboxEntry::from_new(new, now))
            .collect();
        for chunk in insert_chunks(&written, self.chunk_bytes) {
            let sql = self.sql.insert_of(chunk.len());
            let mut query = sqlx::query(&sql);
            for e in chunk {
                let headers = serde_json::to_string(&e.headers)
                    .map_err(|err| OutboxError::invalid("headers", err.to_string()))?;
                query = query
                    .bind(e.id.as_uuid())
                    .bind(e.topic.as_str())
                    .bind(e.partition_key.as_deref())
                    .bind(e.payload.as_slice())
                    .bind(headers)
                    .bind(e.created_at)
                    .bind(e.updated_at)
                    .bind(e.not_before)
                    .bind(e.stamp)
                    .bind(i64::from(e.slice_hash()));
            }
            match query.execute(&mut *conn).await {
                Ok(done) => wrote_all(done.rows_affected(), chunk.len())?,
                Err(err) if is_duplicate(&err) => {
                    return Err(self.first_duplicate(conn, chunk).await);
                }
                Err(err) => return Err(map_err(err)),
            }
        }
        Ok(written)
    }

    /// The error naming the first entry of `chunk` whose id is already taken.
    async fn first_duplicate(
        &self,
        conn: &mut MySqlConnection,
        chunk: &[OutboxEntry],
    ) -> OutboxError {
        let conn = std::sync::Arc::new(tokio::sync::Mutex::new(conn));
        first_duplicate(chunk, |id| {
            let conn = std::sync::Arc::clone(&conn);
            async move {
                let mut conn = conn.lock().await;
                Ok(crate::row::fetch(&mut conn, &self.sql.get, id)
                    .await?
                    .is_some())
            }
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_keep_within_the_packet_size() {
        let mb = 1024 * 1024;
        let writer = MySqlWriter::new(&TableName::default()).max_statement_bytes(mb);
        assert_eq!(writer.chunk_bytes, mb / 2);
        let writer = MySqlWriter::new(&TableName::default()).max_statement_bytes(64 * mb);
        assert_eq!(writer.chunk_bytes, CHUNK_BYTES);
    }
}
