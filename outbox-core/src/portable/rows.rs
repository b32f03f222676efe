//! Plain reads and writes of rows: enqueue (alone or in the host's transaction), get,
//! find, prune.

use chrono::{DateTime, Utc};

use crate::clock::normalize;
use crate::{EntryId, FindRequest, NewEntry, OutboxEntry, OutboxError, PruneRequest, Result};

use super::backend::{PortableBackend, SqlParam};
use super::PortableStore;

impl<B: PortableBackend> PortableStore<B> {
    /// Writes `entries` as new pending rows through the host's own connection or
    /// transaction, so that they commit or roll back with the host's other writes.
    ///
    /// Pass the transaction as `&mut *tx`. Entries are validated first; an id that
    /// already exists fails with [`OutboxError::DuplicateId`]. On PostgreSQL that failure
    /// aborts the host's transaction (use a savepoint to survive it); on SQLite the
    /// entries written before it stay in the transaction until the host rolls back.
    ///
    /// With sqlx, begin the host's transaction on the store's pool
    /// (`store.backend().pool().begin()`), write the business rows on `&mut *tx`, call
    /// this with `&mut *tx`, and commit.
    pub async fn enqueue_in(
        &self,
        conn: &mut B::Connection,
        entries: Vec<NewEntry>,
    ) -> Result<Vec<OutboxEntry>> {
        self.limits.check_new_entries(&entries)?;
        let now = self.clock(conn, None).await?;
        self.insert_all(conn, entries, now).await
    }

    /// Enqueues `entries` in a transaction of the store's own: all of them or none.
    pub(super) async fn enqueue_all(&self, entries: Vec<NewEntry>) -> Result<Vec<OutboxEntry>> {
        self.limits.check_new_entries(&entries)?;
        let mut conn = self.connection().await?;
        let written = self.enqueue_on(&mut conn, entries).await;
        conn.finish(written)
    }

    async fn enqueue_on(
        &self,
        conn: &mut B::Connection,
        entries: Vec<NewEntry>,
    ) -> Result<Vec<OutboxEntry>> {
        // The clock is read before the transaction begins, so that on SQLite the
        // transaction's first statement is a write and waits for the lock instead of
        // failing on a snapshot another writer moved past.
        let now = self.clock(conn, None).await?;
        B::begin(conn).await?;
        match self.insert_all(conn, entries, now).await {
            Ok(written) => {
                B::commit(conn).await?;
                Ok(written)
            }
            Err(e) => {
                // Rolled back here, so that the driver's count of open transactions is
                // settled when the lease judges the connection (see `Lease::finish`).
                let _ = B::rollback(conn).await;
                Err(e)
            }
        }
    }

    async fn insert_all(
        &self,
        conn: &mut B::Connection,
        entries: Vec<NewEntry>,
        now: DateTime<Utc>,
    ) -> Result<Vec<OutboxEntry>> {
        let mut written = Vec::with_capacity(entries.len());
        for new in entries {
            let entry = OutboxEntry::from_new(new, now);
            let params = vec![
                entry.id.into(),
                entry.topic.as_str().into(),
                SqlParam::Text(entry.partition_key.clone()),
                SqlParam::Bytes(entry.payload.clone()),
                SqlParam::Headers(entry.headers.clone()),
                entry.created_at.into(),
                entry.updated_at.into(),
                entry.not_before.into(),
                entry.stamp.into(),
                SqlParam::Count(entry.slice_hash()),
            ];
            match B::execute(conn, &self.sql.insert_entry, params).await {
                Ok(_) => written.push(entry),
                Err(e) if B::is_duplicate(&e) => return Err(OutboxError::DuplicateId(entry.id)),
                Err(e) => return Err(e),
            }
        }
        Ok(written)
    }

    /// Reads one row.
    pub(super) async fn get_entry(&self, id: EntryId) -> Result<Option<OutboxEntry>> {
        let mut conn = self.connection().await?;
        let row = self.read(&mut conn, id, None).await;
        Ok(conn.finish(row)?.map(|(_, e)| e))
    }

    /// Runs a find template (`find_pending.sql` or `find_retry_ready.sql`).
    pub(super) async fn find(&self, sql: &str, req: &FindRequest) -> Result<Vec<OutboxEntry>> {
        self.limits.check_find(req)?;
        let mut conn = self.connection().await?;
        let mut params = vec![
            SqlParam::Time(req.now.map(normalize)),
            SqlParam::Text(req.topic.clone()),
            SqlParam::Text(req.topic.clone()),
        ];
        params.extend(super::claim::slice_params(req.slice));
        params.push(req.limit.into());
        let rows = B::fetch_entries(&mut conn, sql, params).await;
        // Rows stored without a slice hash pass the query's filter; their key decides.
        Ok(conn
            .finish(rows)?
            .into_iter()
            .map(|(_, e)| e)
            .filter(|e| {
                req.slice
                    .is_none_or(|s| s.contains(e.partition_key.as_deref(), e.id))
            })
            .collect())
    }

    /// Deletes one bounded batch of old delivered rows.
    pub(super) async fn prune(&self, req: &PruneRequest) -> Result<u64> {
        self.limits.check_prune(req)?;
        let before: DateTime<Utc> = normalize(req.delivered_before);
        let mut conn = self.connection().await?;
        let params = vec![before.into(), req.batch_size.into()];
        let pruned = B::execute(&mut conn, &self.sql.prune_delivered, params).await;
        conn.finish(pruned)
    }
}
