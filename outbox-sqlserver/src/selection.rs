//! The selection-only half of the store ([`OutboxStore`]): enqueue, read, find, save with
//! a stamp check, prune.

use chrono::{DateTime, Utc};
use outbox_core::store_kit::outcomes::{save_result, Guarded};
use outbox_core::{
    async_trait, Capabilities, EntryId, FindRequest, NewEntry, OutboxEntry, OutboxStore,
    PruneRequest, Result, StoreLimits, TransitionResult,
};

use crate::enqueue::{self, Bound};
use crate::params;
use crate::pool::Checkout;
use crate::retry::CallError;
use crate::row;
use crate::statements::ENQUEUE_ROWS_PER_STATEMENT;
use crate::SqlServerClaimStore;

/// Entries at or above this count go through the bulk copy path (see `bulk.rs`).
pub(crate) const BULK_FROM: usize = 1000;

#[async_trait]
impl OutboxStore for SqlServerClaimStore {
    fn capabilities(&self) -> Capabilities {
        Capabilities::new("sqlserver")
            // Completions judge and write their rows under update locks in one batch.
            .with_atomic_completion(true)
            .with_concurrent_writes(true)
            // Checked offline only (no server here): see the README.
            .with_ordered_claims(true)
            .with_key_runs(true)
            .with_slice_claims(true)
    }

    fn limits(&self) -> &StoreLimits {
        &self.inner.limits
    }

    async fn check_schema(&self) -> Result<()> {
        crate::migrate::check_schema_on(
            &mut crate::pool::SchemaReader {
                pool: &self.inner.pool,
                retry: &self.inner.retry,
                retried: &self.inner.retried,
            },
            &self.inner.table,
        )
        .await
    }

    async fn enqueue_batch(&self, entries: Vec<NewEntry>) -> Result<Vec<OutboxEntry>> {
        self.inner.limits.check_new_entries(&entries)?;
        if entries.len() >= BULK_FROM && entries.iter().all(crate::bulk::fits) {
            return crate::bulk::enqueue(self, entries).await;
        }
        let ids: Vec<EntryId> = entries.iter().map(|e| e.id).collect();
        let chunked = entries.len() > ENQUEUE_ROWS_PER_STATEMENT;
        // Each try binds its own copy: a rolled-back try is run again from the input.
        crate::retry::run(&self.inner.retry, &self.inner.retried, || {
            let entries = entries.clone();
            let ids = &ids;
            async move {
                let bound = Bound::all(entries)?;
                let mut checkout = Checkout::get(&self.inner.pool).await?;
                let client = checkout.client();
                // More than one statement: one transaction, all or nothing.
                if chunked {
                    client
                        .simple_query("BEGIN TRANSACTION")
                        .await?
                        .into_results()
                        .await?;
                }
                let written = match enqueue::insert(client, &self.inner.sql, bound).await {
                    Ok(w) => w,
                    Err(enqueue::InsertError::Driver(e)) => {
                        return Err(CallError::of_insert(e, ids))
                    }
                    Err(e) => return Err(CallError::Mapped(e.into_outbox(ids))),
                };
                if chunked {
                    client
                        .simple_query("COMMIT TRANSACTION")
                        .await?
                        .into_results()
                        .await?;
                }
                checkout.done();
                Ok(written)
            }
        })
        .await
    }

    async fn get(&self, id: EntryId) -> Result<Option<OutboxEntry>> {
        let rows = self.query(&self.inner.sql.get, &params::get(id)).await?;
        rows.first().map(row::entry).transpose()
    }

    async fn find_pending(&self, req: &FindRequest) -> Result<Vec<OutboxEntry>> {
        self.find(&self.inner.sql.find_pending, req).await
    }

    async fn find_retry_ready(&self, req: &FindRequest) -> Result<Vec<OutboxEntry>> {
        self.find(&self.inner.sql.find_retry_ready, req).await
    }

    async fn save(
        &self,
        entry: &OutboxEntry,
        now: Option<DateTime<Utc>>,
    ) -> Result<TransitionResult> {
        let rows = self
            .query(&self.inner.sql.save, &params::save(entry, now)?)
            .await?;
        let found = match rows.first() {
            None => Guarded::Missing,
            Some(r) => Guarded::of(Some(row::entry(r)?), row::applied(r)?),
        };
        Ok(save_result(entry, found))
    }

    async fn prune_delivered(&self, req: &PruneRequest) -> Result<u64> {
        self.inner.limits.check_prune(req)?;
        self.count(
            &self.inner.sql.prune_delivered,
            &params::prune(req)?,
            "deleted",
        )
        .await
    }
}

impl SqlServerClaimStore {
    async fn find(&self, sql: &str, req: &FindRequest) -> Result<Vec<OutboxEntry>> {
        self.inner.limits.check_find(req)?;
        let rows = self.query(sql, &params::find(req)?).await?;
        rows.iter().map(row::entry).collect()
    }
}
