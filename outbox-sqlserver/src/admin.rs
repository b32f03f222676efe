//! The operator operations of [`SqlServerClaimStore`]: one batch each.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use outbox_core::store_kit::admin::StatsColumns;
use outbox_core::{ListRequest, OutboxAdmin, OutboxEntry, OutboxError, OutboxStats, Result};

use crate::SqlServerClaimStore;
use crate::{params, row};

impl SqlServerClaimStore {
    /// The stats as `sql` (exact or live) reads them.
    async fn stats_by(&self, sql: &str, now: Option<DateTime<Utc>>) -> Result<OutboxStats> {
        let rows = self.query(sql, &params::stats(now)).await?;
        let row = rows.first().ok_or_else(|| OutboxError::Database {
            message: "the stats query returned no row".into(),
            source: None,
        })?;
        let map_err = crate::error::map_err;
        let estimated: Option<i64> = row.try_get("delivered_estimated").map_err(map_err)?;
        StatsColumns {
            at: row::required_time(row, "at", "stats")?,
            oldest_pending: row
                .try_get::<chrono::NaiveDateTime, _>("oldest_pending")
                .map_err(map_err)?
                .map(|t| t.and_utc()),
            claims_made: row.try_get("claims_made").map_err(map_err)?,
            delivered_estimated: estimated.is_some_and(|n| n != 0),
        }
        .read(|column| row.try_get(column).map_err(map_err))
    }
}

#[async_trait]
impl OutboxAdmin for SqlServerClaimStore {
    async fn stats(&self, req: &outbox_core::StatsRequest) -> Result<OutboxStats> {
        let now = req.now;
        self.stats_by(&self.inner.sql.stats, now).await
    }

    async fn live_stats(&self, req: &outbox_core::StatsRequest) -> Result<OutboxStats> {
        let now = req.now;
        self.stats_by(&self.inner.sql.live_stats, now).await
    }

    async fn topic_stats(&self, limit: u32) -> Result<Vec<outbox_core::TopicStats>> {
        outbox_core::store_kit::admin::check_topic_limit(limit)?;
        let rows = self.query(&self.inner.sql.topic_stats, &[]).await?;
        outbox_core::store_kit::admin::topic_stats_of(rows.iter().map(row::topic_group), limit)
    }

    async fn dead_letters(
        &self,
        req: &outbox_core::DeadLettersRequest,
    ) -> Result<Vec<OutboxEntry>> {
        let limit = req.limit;
        self.inner
            .limits
            .check_batch_size("limit", limit as usize)?;
        let rows = self
            .query(&self.inner.sql.dead_letters, &params::dead_letters(limit)?)
            .await?;
        rows.iter().map(row::entry).collect()
    }

    async fn list(&self, req: &ListRequest) -> Result<Vec<OutboxEntry>> {
        outbox_core::store_kit::admin::check_list(req, &self.inner.limits)?;
        let rows = self
            .query(self.inner.sql.list.get(req.status), &params::list(req)?)
            .await?;
        rows.iter().map(row::entry).collect()
    }

    async fn count_delivered_before(&self, before: DateTime<Utc>) -> Result<u64> {
        self.count(
            &self.inner.sql.count_delivered_before,
            &params::count_delivered_before(before),
            "n",
        )
        .await
    }

    async fn requeue(&self, req: &outbox_core::RequeueRequest) -> Result<u64> {
        req.check()?;
        let (from, which, now) = (req.from, req.which.clone(), req.now);
        self.count(
            &self.inner.sql.requeue,
            &params::requeue(now, &which, from),
            "requeued",
        )
        .await
    }

    async fn purge(&self, req: &outbox_core::PurgeRequest) -> Result<u64> {
        req.check()?;
        let (from, which) = (req.from, req.which.clone());
        let batch = i32::try_from(outbox_core::store_kit::writes::DELETE_BATCH).unwrap_or(i32::MAX);
        let params = params::purge(&which, batch, from);
        outbox_core::store_kit::writes::delete_in_batches(|| {
            self.count(&self.inner.sql.purge, &params, "deleted")
        })
        .await
    }
}
