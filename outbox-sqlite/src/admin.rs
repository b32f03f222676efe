//! The operator operations of [`SqliteClaimStore`].

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use outbox_core::{
    DeadLetterSelection, EmissionStatus, ListRequest, OutboxAdmin, OutboxEntry, OutboxError,
    OutboxStats, Result,
};
use sqlx::Row;

use crate::error::map_err;
use crate::row::{decode, micros};
use crate::SqliteClaimStore;

fn selection_id(which: DeadLetterSelection) -> Option<Vec<u8>> {
    match which {
        DeadLetterSelection::One(id) => Some(id.as_uuid().as_bytes().to_vec()),
        DeadLetterSelection::All => None,
    }
}

fn count(row: &sqlx::sqlite::SqliteRow, column: &str) -> Result<u64> {
    let v: i64 = row.try_get(column).map_err(map_err)?;
    u64::try_from(v).map_err(|_| OutboxError::Database {
        message: format!("negative {column} count"),
        source: None,
    })
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
        let mut stats = OutboxStats::empty(now);
        for status in EmissionStatus::ALL {
            stats.counts.insert(status, count(&row, status.as_str())?);
        }
        let oldest: Option<i64> = row.try_get("oldest_pending").map_err(map_err)?;
        stats.oldest_pending_created_at = oldest.and_then(DateTime::from_timestamp_micros);
        stats.retry_ready = count(&row, "retry_ready")?;
        stats.claims_in_flight = count(&row, "in_flight")?;
        stats.expired_leases = count(&row, "expired")?;
        let claims: Option<i64> = row.try_get("claims_made").map_err(map_err)?;
        stats.claims_made = claims.map(|n| u64::try_from(n).unwrap_or(0));
        let estimated: i64 = row.try_get("delivered_estimated").map_err(map_err)?;
        stats.delivered_estimated = estimated != 0;
        Ok(stats)
    }
}

#[async_trait]
impl OutboxAdmin for SqliteClaimStore {
    async fn stats(&self, now: Option<DateTime<Utc>>) -> Result<OutboxStats> {
        self.stats_by(&self.sql.stats, now).await
    }

    async fn live_stats(&self, now: Option<DateTime<Utc>>) -> Result<OutboxStats> {
        self.stats_by(&self.sql.live_stats, now).await
    }

    async fn dead_letters(&self, limit: u32) -> Result<Vec<OutboxEntry>> {
        self.config
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
        outbox_core::store_kit::check_list(req, &self.config.limits)?;
        sqlx::query(&self.sql.list_entries)
            .bind(i64::from(req.status.code()))
            .bind(req.topic.clone())
            .bind(req.after.map(|id| id.as_uuid().as_bytes().to_vec()))
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
            .bind(micros(outbox_core::store_kit::normalize_time(before)))
            .fetch_one(&self.pool)
            .await
            .map_err(map_err)?;
        u64::try_from(n).map_err(|_| OutboxError::Database {
            message: "negative count".into(),
            source: None,
        })
    }

    async fn requeue(
        &self,
        from: EmissionStatus,
        which: DeadLetterSelection,
        now: Option<DateTime<Utc>>,
    ) -> Result<u64> {
        outbox_core::store_kit::check_requeue(from)?;
        let now = self.now(now);
        self.detached(move |store| async move {
            let mut tx = store.write_tx().await?;
            let done = sqlx::query(&store.sql.requeue)
                .bind(micros(now))
                .bind(selection_id(which))
                .bind(i64::from(from.code()))
                .execute(&mut *tx)
                .await
                .map_err(map_err);
            tx.finish(done).await.map(|d| d.rows_affected())
        })
        .await
    }

    async fn purge(&self, from: EmissionStatus, which: DeadLetterSelection) -> Result<u64> {
        outbox_core::store_kit::check_purge(from)?;
        outbox_core::store_kit::delete_in_batches(|| {
            self.detached(move |store| async move {
                let mut tx = store.write_tx().await?;
                let done = sqlx::query(&store.sql.purge)
                    .bind(selection_id(which))
                    .bind(i64::from(outbox_core::store_kit::DELETE_BATCH))
                    .bind(i64::from(from.code()))
                    .execute(&mut *tx)
                    .await
                    .map_err(map_err);
                tx.finish(done).await.map(|d| d.rows_affected())
            })
        })
        .await
    }
}
