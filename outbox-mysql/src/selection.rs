//! The selection-only half of the store ([`OutboxStore`]): enqueue, read, find, save with
//! a stamp check, prune.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use outbox_core::store_kit::outcomes::{save_result, Guarded};
use outbox_core::store_kit::sql::normalize_time;
use outbox_core::{
    Capabilities, EntryId, FindRequest, NewEntry, OutboxEntry, OutboxStore, PruneRequest, Result,
    StoreLimits, TargetState, TransitionResult,
};
use uuid::Uuid;

use crate::error::map_err;
use crate::row::decode;
use crate::MySqlClaimStore;

#[async_trait]
impl OutboxStore for MySqlClaimStore {
    fn capabilities(&self) -> Capabilities {
        Capabilities::new("mysql")
            .with_atomic_completion(true)
            .with_concurrent_writes(true)
            .with_ordered_claims(true)
            .with_key_runs(true)
            .with_slice_claims(true)
    }

    fn limits(&self) -> &StoreLimits {
        &self.config.basics.limits
    }

    async fn check_schema(&self) -> Result<()> {
        crate::check_schema(&self.pool, &self.config.basics.table).await
    }

    async fn enqueue_batch(&self, entries: Vec<NewEntry>) -> Result<Vec<OutboxEntry>> {
        self.config.basics.limits.check_new_entries(&entries)?;
        self.detached(|store| async move {
            let mut tx = store.pool.begin().await.map_err(map_err)?;
            let written = store.writer.insert_all(&mut tx, entries).await?;
            tx.commit().await.map_err(map_err)?;
            Ok(written)
        })
        .await
    }

    async fn get(&self, id: EntryId) -> Result<Option<OutboxEntry>> {
        let mut conn = self.pool.acquire().await.map_err(map_err)?;
        crate::row::fetch(&mut conn, &self.sql.get, id).await
    }

    async fn find_pending(&self, req: &FindRequest) -> Result<Vec<OutboxEntry>> {
        self.find(self.sql.find_pending.pick(false, req.slice.is_some()), req)
            .await
    }

    async fn find_retry_ready(&self, req: &FindRequest) -> Result<Vec<OutboxEntry>> {
        self.find(
            self.sql.find_retry_ready.pick(false, req.slice.is_some()),
            req,
        )
        .await
    }

    async fn save(
        &self,
        entry: &OutboxEntry,
        now: Option<DateTime<Utc>>,
    ) -> Result<TransitionResult> {
        let now = self.now(now);
        let entry = entry.clone();
        let mut target = entry.clone();
        TargetState::from_entry(&entry).apply_to(&mut target, now, Uuid::new_v4());
        self.detached(move |store| async move {
            store.retrying(|| store.save_now(&entry, &target)).await
        })
        .await
    }

    async fn prune_delivered(&self, req: &PruneRequest) -> Result<u64> {
        self.config.basics.limits.check_prune(req)?;
        let req = req.clone();
        self.detached(move |store| async move {
            let done = sqlx::query(&store.sql.prune_delivered)
                .bind(normalize_time(req.delivered_before))
                .bind(i64::from(req.batch_size))
                .execute(&store.pool)
                .await
                .map_err(map_err)?;
            Ok(done.rows_affected())
        })
        .await
    }
}

impl MySqlClaimStore {
    async fn find(&self, sql: &str, req: &FindRequest) -> Result<Vec<OutboxEntry>> {
        self.config.basics.limits.check_find(req)?;
        self.capabilities().check_find(req)?;
        let mut query = sqlx::query(sql)
            .bind(req.now.map(normalize_time))
            .bind(req.topic.clone());
        if let Some(slice) = req.slice {
            query = query
                .bind(i64::from(slice.count()))
                .bind(i64::from(slice.index()));
        }
        query
            .bind(i64::from(req.limit))
            .fetch_all(&self.pool)
            .await
            .map_err(map_err)?
            .iter()
            .map(decode)
            .collect()
    }

    /// The stamp-checked write of `target` over `entry` in a transaction, and its
    /// judgement on the durable row when refused.
    async fn save_now(
        &self,
        entry: &OutboxEntry,
        target: &OutboxEntry,
    ) -> Result<TransitionResult> {
        let mut tx = self.pool.begin().await.map_err(map_err)?;
        let written = sqlx::query(&self.sql.save)
            .bind(target.status.code())
            .bind(target.next_retry_at)
            .bind(i64::from(target.attempt_count))
            .bind(target.last_error.clone())
            .bind(target.dead_letter_reason.clone())
            .bind(target.delivered_at)
            .bind(target.provider_message_id.clone())
            .bind(target.updated_at)
            .bind(target.stamp)
            .bind(entry.id.as_uuid())
            .bind(entry.stamp)
            .execute(&mut *tx)
            .await
            .map_err(map_err)?;
        let found = if written.rows_affected() == 1 {
            Guarded::Applied(target.clone())
        } else {
            let durable = crate::row::fetch(&mut tx, &self.sql.get, entry.id).await?;
            Guarded::of(durable, false)
        };
        tx.commit().await.map_err(map_err)?;
        Ok(save_result(entry, found))
    }
}
