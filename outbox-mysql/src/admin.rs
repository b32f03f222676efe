//! The operator operations of [`MySqlClaimStore`].

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use outbox_core::store_kit::admin::{check_list, StatsColumns};
use outbox_core::store_kit::sql::normalize_time;
use outbox_core::store_kit::writes::{delete_in_batches, DELETE_BATCH};
use outbox_core::{ListRequest, OutboxAdmin, OutboxEntry, OutboxError, OutboxStats, Result};
use sqlx::Row;

use crate::error::map_err;
use crate::row::{clock, decode, time};
use crate::MySqlClaimStore;

impl MySqlClaimStore {
    /// The stats as `sql` (exact or live) reads them.
    async fn stats_by(&self, sql: &str, now: Option<DateTime<Utc>>) -> Result<OutboxStats> {
        let row = sqlx::query(sql)
            .bind(now.map(normalize_time))
            .fetch_one(&self.pool)
            .await
            .map_err(map_err)?;
        let estimated: i64 = row.try_get("delivered_estimated").map_err(map_err)?;
        StatsColumns {
            at: clock(&row)?,
            oldest_pending: time(&row, "stats", "oldest_pending")?,
            claims_made: row.try_get("claims_made").map_err(map_err)?,
            delivered_estimated: estimated != 0,
        }
        .read(|column| row.try_get(column).map_err(map_err))
    }
}

#[async_trait]
impl OutboxAdmin for MySqlClaimStore {
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
        check_list(req, &self.config.basics.limits)?;
        let after = req.after.map(|id| id.as_uuid());
        sqlx::query(self.sql.list_entries.get(req.status))
            .bind(after)
            .bind(after)
            .bind(req.topic.clone())
            .bind(req.topic.clone())
            .bind(req.partition_key.clone())
            .bind(req.partition_key.clone())
            .bind(i64::from(req.limit))
            .fetch_all(&self.pool)
            .await
            .map_err(map_err)?
            .iter()
            .map(decode)
            .collect()
    }

    async fn count_delivered_before(&self, before: DateTime<Utc>) -> Result<u64> {
        let n: i64 = sqlx::query_scalar(&self.sql.count_delivered_before)
            .bind(normalize_time(before))
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
        let now = now.map(normalize_time);
        let id = which.id().map(|id| id.as_uuid());
        let topic = which.topic().map(str::to_owned);
        self.detached(move |store| async move {
            store
                .retrying(|| async {
                    let done = sqlx::query(&store.sql.requeue)
                        .bind(now)
                        .bind(from.code())
                        .bind(id)
                        .bind(id)
                        .bind(topic.clone())
                        .bind(topic.clone())
                        .execute(&store.pool)
                        .await
                        .map_err(map_err)?;
                    Ok(done.rows_affected())
                })
                .await
        })
        .await
    }

    async fn purge(&self, req: &outbox_core::PurgeRequest) -> Result<u64> {
        req.check()?;
        let (from, which) = (req.from, req.which.clone());
        let id = which.id().map(|id| id.as_uuid());
        let topic = which.topic().map(str::to_owned);
        delete_in_batches(|| {
            let topic = topic.clone();
            self.detached(move |store| async move {
                let done = sqlx::query(&store.sql.purge)
                    .bind(from.code())
                    .bind(id)
                    .bind(id)
                    .bind(topic.clone())
                    .bind(topic)
                    .bind(i64::from(DELETE_BATCH))
                    .execute(&store.pool)
                    .await
                    .map_err(map_err)?;
                Ok(done.rows_affected())
            })
        })
        .await
    }
}
