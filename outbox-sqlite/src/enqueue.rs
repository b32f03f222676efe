//! Enqueueing in the host's transaction, through the store's writer.

use outbox_core::{NewEntry, OutboxEntry, Result};
use sqlx::SqliteConnection;

use crate::{SqliteClaimStore, SqliteWriter};

impl SqliteClaimStore {
    /// The store's writer: the same table, limits and clock, for writing entries in the
    /// host's own transactions (see [`SqliteWriter`]).
    pub fn writer(&self) -> &SqliteWriter {
        &self.writer
    }

    /// Writes `entries` on the host's connection or transaction, so they commit or roll
    /// back together with the host's business rows; the same as
    /// [`SqliteWriter::enqueue_in`] on [`SqliteClaimStore::writer`].
    ///
    /// ```no_run
    /// # async fn demo(store: outbox_sqlite::SqliteClaimStore) -> Result<(), Box<dyn std::error::Error>> {
    /// let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    /// // sqlx::query("INSERT INTO orders …").execute(&mut *tx).await?;
    /// store.enqueue_in(&mut tx, vec![outbox_core::NewEntry::new("orders.created", b"{}".to_vec())]).await?;
    /// tx.commit().await?;
    /// # Ok(()) }
    /// ```
    pub async fn enqueue_in(
        &self,
        conn: &mut SqliteConnection,
        entries: Vec<NewEntry>,
    ) -> Result<Vec<OutboxEntry>> {
        self.writer.enqueue_in(conn, entries).await
    }
}
