//! Enqueueing, in the store's own transaction or in the host's.

use outbox_core::{NewEntry, OutboxEntry, OutboxError, Result};
use sqlx::{Connection, SqliteConnection};

use crate::error::map_err;
use crate::row::{micros, opt_micros};
use crate::SqliteClaimStore;

impl SqliteClaimStore {
    /// Writes `entries` on the host's connection or transaction, so they commit or roll
    /// back together with the host's business rows:
    ///
    /// ```no_run
    /// # async fn demo(store: outbox_sqlite::SqliteClaimStore) -> outbox_core::Result<()> {
    /// let mut tx = store.pool().begin().await.map_err(|e| outbox_core::OutboxError::Database { message: e.to_string(), source: None })?;
    /// // sqlx::query("INSERT INTO orders …").execute(&mut *tx).await?;
    /// store.enqueue_in(&mut tx, vec![outbox_core::NewEntry::new("orders.created", b"{}".to_vec())]).await?;
    /// tx.commit().await.map_err(|e| outbox_core::OutboxError::Database { message: e.to_string(), source: None })?;
    /// # Ok(()) }
    /// ```
    ///
    /// The entries are validated first; they are written under a savepoint, so a
    /// refused batch (a duplicate id, say) leaves nothing of itself in the host's transaction.
    pub async fn enqueue_in(
        &self,
        conn: &mut SqliteConnection,
        entries: Vec<NewEntry>,
    ) -> Result<Vec<OutboxEntry>> {
        self.config.limits.check_new_entries(&entries)?;
        let mut savepoint = conn.begin().await.map_err(map_err)?;
        let written = self.insert_all(&mut savepoint, entries).await?;
        savepoint.commit().await.map_err(map_err)?;
        Ok(written)
    }

    /// Inserts already-validated entries on `conn`; the caller owns the transaction.
    pub(crate) async fn insert_all(
        &self,
        conn: &mut SqliteConnection,
        entries: Vec<NewEntry>,
    ) -> Result<Vec<OutboxEntry>> {
        let now = self.now(None);
        let mut written = Vec::with_capacity(entries.len());
        for new in entries {
            let entry = OutboxEntry::from_new(new, now);
            let headers = serde_json::to_string(&entry.headers)
                .map_err(|e| OutboxError::invalid("headers", e.to_string()))?;
            let inserted = sqlx::query(&self.sql.insert)
                .bind(entry.id.as_uuid().as_bytes().to_vec())
                .bind(entry.topic.clone())
                .bind(entry.partition_key.clone())
                .bind(entry.payload.clone())
                .bind(headers)
                .bind(micros(entry.created_at))
                .bind(opt_micros(entry.not_before))
                .bind(entry.stamp.as_bytes().to_vec())
                .execute(&mut *conn)
                .await;
            match inserted {
                Ok(_) => written.push(entry),
                Err(sqlx::Error::Database(db)) if db.is_unique_violation() => {
                    return Err(OutboxError::DuplicateId(entry.id));
                }
                Err(e) => return Err(map_err(e)),
            }
        }
        Ok(written)
    }
}
