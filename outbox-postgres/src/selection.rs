//! The selection-only half of the store ([`OutboxStore`]): enqueue, read, find, save with
//! a stamp check, prune.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use outbox_core::store_kit::outcomes::{save_result, Guarded};
use outbox_core::store_kit::sql::normalize_time;
use outbox_core::{
    async_trait, Capabilities, EntryId, FindRequest, NewEntry, OutboxEntry, OutboxStore,
    PruneRequest, Result, StoreLimits, TargetState, TransitionResult, WakeSignal,
};

use crate::batch_params::{sql_count, NewEntries};
use crate::connection::{execute, query, query_mapped};
use crate::error::map_insert_err;
use crate::store::in_input_order;
use crate::typed::{typed, Param};
use crate::{row, PgClaimStore};

#[async_trait]
impl OutboxStore for PgClaimStore {
    fn capabilities(&self) -> Capabilities {
        Capabilities::new("postgres")
            // Completions lock, judge and write their rows in one statement.
            .with_atomic_completion(true)
            .with_notifications(self.inner.listener.is_some())
            .with_concurrent_writes(true)
            // Where the table was prepared for it (`enable_ordered_claims`).
            .with_ordered_claims(self.inner.ordered)
            .with_key_runs(self.inner.ordered)
            .with_slice_claims(true)
    }

    fn limits(&self) -> &StoreLimits {
        &self.inner.limits
    }

    async fn check_schema(&self) -> Result<()> {
        let once = self.inner.db.unnamed();
        crate::migrate::check_schema_on(
            &mut crate::connection::SchemaReader(&once),
            &self.inner.table,
        )
        .await
    }

    fn wake_signal(&self) -> Option<Arc<dyn WakeSignal>> {
        self.inner
            .listener
            .clone()
            .map(|l| l as Arc<dyn WakeSignal>)
    }

    async fn enqueue_batch(&self, entries: Vec<NewEntry>) -> Result<Vec<OutboxEntry>> {
        self.inner.limits.check_new_entries(&entries)?;
        if entries.len() >= crate::bulk::COPY_FROM && self.inner.db.statements.copies_in_bulk() {
            return crate::bulk::enqueue(&self.inner, entries).await;
        }
        let columns = NewEntries::new(entries)?;
        let params = columns.typed_params(&self.inner.channel);
        let rows = query_mapped(&self.inner.db, self.inner.writer.sql(), &params, |e| {
            map_insert_err(e, &columns.ids)
        })
        .await?;
        in_input_order(&columns.ids, &rows)
    }

    async fn get(&self, id: EntryId) -> Result<Option<OutboxEntry>> {
        let rows = query(&self.inner.db, &self.inner.sql.get, &[typed(&id.as_uuid())]).await?;
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
        let target = TargetState::from_entry(entry);
        let attempt_count = sql_count(target.attempt_count)?;
        let now = now.map(normalize_time);
        let next_retry_at = target.next_retry_at.map(normalize_time);
        let delivered_at = target.delivered_at.map(normalize_time);
        let id = entry.id.as_uuid();
        let status = target.status.code();
        let params: [Param<'_>; 10] = [
            typed(&id),
            typed(&entry.stamp),
            typed(&status),
            typed(&next_retry_at),
            typed(&attempt_count),
            typed(&target.last_error),
            typed(&target.dead_letter_reason),
            typed(&delivered_at),
            typed(&target.provider_message_id),
            typed(&now),
        ];
        let rows = query(&self.inner.db, &self.inner.sql.save, &params).await?;
        let found = match rows.first() {
            None => Guarded::Missing,
            Some(r) => Guarded::of(Some(row::entry(r)?), row::applied(r)?),
        };
        Ok(save_result(entry, found))
    }

    async fn prune_delivered(&self, req: &PruneRequest) -> Result<u64> {
        self.inner.limits.check_prune(req)?;
        let before = normalize_time(req.delivered_before);
        let limit = i64::from(req.batch_size);
        execute(
            &self.inner.db,
            &self.inner.sql.prune_delivered,
            &[typed(&before), typed(&limit)],
        )
        .await
    }
}

impl PgClaimStore {
    async fn find(&self, sql: &str, req: &FindRequest) -> Result<Vec<OutboxEntry>> {
        self.inner.limits.check_find(req)?;
        let now = req.now.map(normalize_time);
        let limit = i64::from(req.limit);
        let slices = req.slice.map(|s| i64::from(s.count()));
        let slice = req.slice.map(|s| i64::from(s.index()));
        let rows = query(
            &self.inner.db,
            sql,
            &[
                typed(&now),
                typed(&req.topic),
                typed(&limit),
                typed(&slices),
                typed(&slice),
            ],
        )
        .await?;
        rows.iter().map(row::entry).collect()
    }
}
