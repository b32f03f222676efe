//! The selection-only half of the store ([`OutboxStore`]): enqueue, read, find, save with
//! a stamp check, prune.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use outbox_core::store_kit::sql::normalize_time;
use outbox_core::{
    Capabilities, EntryId, FindRequest, NewEntry, OutboxEntry, OutboxStore, PruneRequest, Result,
    StoreLimits, TargetState, TransitionOutcome, TransitionResult,
};
use sqlx::Sqlite;
use uuid::Uuid;

use crate::error::map_err;
use crate::row::{decode, micros, opt_micros};
use crate::SqliteClaimStore;

/// Binds the outcome fields of `entry` as ?1..?9 of the transition statements.
fn bind_outcome<'q>(
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
        Capabilities::new("sqlite")
            .with_atomic_completion(true)
            // One writer at a time, whatever the pool size: `concurrent_writes` stays false.
            // Where the table was prepared for it (`enable_ordered_claims`).
            .with_ordered_claims(self.ordered)
            .with_key_runs(self.ordered)
            .with_slice_claims(true)
    }

    fn limits(&self) -> &StoreLimits {
        &self.config.basics.limits
    }

    /// Whether the store's own connection waited for another writer's write lock in the
    /// last two seconds: a drain then claims one batch at a time, leaving the lock free
    /// between its calls for the writers beside it.
    fn writers_beside(&self) -> bool {
        self.direct.writers_beside()
    }

    async fn check_schema(&self) -> Result<()> {
        crate::check_schema(&self.pool, &self.config.basics.table).await
    }

    async fn enqueue_batch(&self, entries: Vec<NewEntry>) -> Result<Vec<OutboxEntry>> {
        self.config.basics.limits.check_new_entries(&entries)?;
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
        self.config.basics.limits.check_prune(req)?;
        let req = req.clone();
        self.detached(move |store| async move { store.prune_now(&req).await })
            .await
    }
}

impl SqliteClaimStore {
    async fn find(&self, sql: &str, req: &FindRequest) -> Result<Vec<OutboxEntry>> {
        self.config.basics.limits.check_find(req)?;
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
        let written = bind_outcome(sqlx::query(&self.sql.save), target)
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
