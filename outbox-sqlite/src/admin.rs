//! The operator operations of [`SqliteClaimStore`].

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use outbox_core::store_kit::admin::StatsColumns;
use outbox_core::{
    DeadLetterSelection, ListRequest, OutboxAdmin, OutboxEntry, OutboxError, OutboxStats, Result,
};
use sqlx::Row;

use crate::error::map_err;
use crate::row::{decode, micros};
use crate::SqliteClaimStore;

/// The selection's id and topic as the requeue and purge statements bind them.
fn selection(which: &DeadLetterSelection) -> (Option<Vec<u8>>, Option<String>) {
    (
        which.id().map(|id| id.as_uuid().as_bytes().to_vec()),
        which.topic().map(str::to_owned),
    )
}

impl SqliteClaimStore {
    /// The stats as `sql` (exact or live) reads them.
    async fn stats_by(&self, sql: &str, now: Option<DateTime<Utc>>) -> Result<OutboxStats> {
        let now = self.now(now);
        let row = sqlx::query(sql)
            .bind(micros(now))
            .fetch_one(&self.pool)
            .await
            .map_err(map_err)?;
        let oldest: Option<i64> = row.try_get("oldest_pending").map_err(map_err)?;
        let estimated: i64 = row.try_get("delivered_estimated").map_err(map_err)?;
        StatsColumns {
            at: now,
            oldest_pending: oldest.and_then(DateTime::from_timestamp_micros),
            claims_made: row.try_get("claims_made").map_err(map_err)?,
            delivered_estimated: estimated != 0,
        }
        .read(|column| row.try_get(column).map_err(map_err))
    }
}

#[async_trait]
impl OutboxAdmin for SqliteClaimStore {
    async fn stats(&self, req: &outbox_core::StatsRequest) -> Result<OutboxStats> {
        let now = req.now;
        self.stats_by(&self.sql.stats, now).await
    }

    async fn live_stats(&self, req: &outbox_core::StatsRequest) -> Result<OutboxStats> {
        let now = req.now;
        self.stats_by(&self.sql.live_stats, now).await
    }

    async fn topic_stats(&self, limit: u32) -> Result<Vec<outbox_core::TopicStats>> {
        outbox_core::store_kit::admin::check_topic_limit(limit)?;
        let rows = sqlx::query(&self.sql.topic_stats)
            .fetch_all(&self.pool)
            .await
            .map_err(map_err)?;
        outbox_core::store_kit::admin::topic_stats_of(
            rows.iter().map(crate::row::topic_group),
            limit,
        )
    }

    async fn dead_letters(
        &self,
        req: &outbox_core::DeadLettersRequest,
    ) -> Result<Vec<OutboxEntry>> {
        let limit = req.limit;
        self.config
            .basics
            .limits
            .check_batch_size("limit", limit as usize)?;
        sqlx::query(&self.sql.dead_letters)
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await
            .map_err(map_err)?
            .iter()
            .map(decode)
            .collect()
    }

    async fn list(&self, req: &ListRequest) -> Result<Vec<OutboxEntry>> {
        outbox_core::store_kit::admin::check_list(req, &self.config.basics.limits)?;
        // Where the page starts, read first and bound as values (see list_entries.sql).
        let after = req.after.map(|id| id.as_uuid().as_bytes().to_vec());
        let Some(from) = sqlx::query(self.sql.list_cursor.get(req.status))
            .bind(after)
            .fetch_optional(&self.pool)
            .await
            .map_err(map_err)?
        else {
            return Ok(Vec::new());
        };
        let from_at: i64 = from.try_get("from_at").map_err(map_err)?;
        let from_id: Vec<u8> = from.try_get("from_id").map_err(map_err)?;
        let from_seq: i64 = from.try_get("from_seq").map_err(map_err)?;
        sqlx::query(self.sql.list_entries.get(req.status))
            .bind(req.topic.clone())
            .bind(from_at)
            .bind(from_id)
            .bind(from_seq)
            .bind(i64::from(req.limit))
            .bind(req.partition_key.clone())
            .fetch_all(&self.pool)
            .await
            .map_err(map_err)?
            .iter()
            .map(decode)
            .collect()
    }

    async fn count_delivered_before(&self, before: DateTime<Utc>) -> Result<u64> {
        let n: i64 = sqlx::query_scalar(&self.sql.count_delivered_before)
            .bind(micros(outbox_core::store_kit::sql::normalize_time(before)))
            .fetch_one(&self.pool)
            .await
            .map_err(map_err)?;
        u64::try_from(n).map_err(|_| OutboxError::Database {
            message: "negative count".into(),
            source: None,
        })
    }

    async fn requeue(&self, req: &outbox_core::RequeueRequest) -> Result<u64> {
        req.check()?;
        let (from, which, now) = (req.from, req.which.clone(), req.now);
        let now = self.now(now);
        let (id, topic) = selection(&which);
        self.detached(move |store| async move {
            let mut tx = store.write_tx().await?;
            let done = sqlx::query(&store.sql.requeue)
                .bind(micros(now))
                .bind(id)
                .bind(i64::from(from.code()))
                .bind(topic)
                .execute(&mut *tx)
                .await
                .map_err(map_err);
            tx.finish(done).await.map(|d| d.rows_affected())
        })
        .await
    }

    async fn purge(&self, req: &outbox_core::PurgeRequest) -> Result<u64> {
        req.check()?;
        let (from, which) = (req.from, req.which.clone());
        let (id, topic) = selection(&which);
        outbox_core::store_kit::writes::delete_in_batches(|| {
            let (id, topic) = (id.clone(), topic.clone());
            self.detached(move |store| async move {
                let mut tx = store.write_tx().await?;
                let done = sqlx::query(&store.sql.purge)
                    .bind(id)
                    .bind(i64::from(outbox_core::store_kit::writes::DELETE_BATCH))
                    .bind(i64::from(from.code()))
                    .bind(topic)
                    .execute(&mut *tx)
                    .await
                    .map_err(map_err);
                tx.finish(done).await.map(|d| d.rows_affected())
            })
        })
        .await
    }
}
