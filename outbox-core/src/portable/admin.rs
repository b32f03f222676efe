//! The operator operations of the portable store, in portable SQL.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::admin::StatsColumns;
use crate::clock::normalize;
use crate::{
    DeadLetterSelection, EmissionStatus, OutboxAdmin, OutboxEntry, OutboxError, OutboxStats, Result,
};

use super::backend::{PortableBackend, SqlParam};
use super::PortableStore;

/// The selection's parameters as the requeue and purge statements take them: the id
/// twice, the topic twice.
fn selection(which: &DeadLetterSelection) -> [SqlParam; 4] {
    let id = SqlParam::Uuid(which.id().map(|id| id.as_uuid()));
    let topic = SqlParam::Text(which.topic().map(str::to_owned));
    [id.clone(), id, topic.clone(), topic]
}

impl<B: PortableBackend> PortableStore<B> {
    /// The counts of [`OutboxAdmin::stats`], read on `conn`.
    async fn stats_on(
        &self,
        conn: &mut B::Connection,
        now: Option<DateTime<Utc>>,
    ) -> Result<OutboxStats> {
        let at = self.clock(conn, now).await?;
        let counts = B::fetch_counts(conn, &self.sql.stats, vec![at.into()]).await?;
        // The statement's columns, in order (sql/portable/stats.sql).
        const COLUMNS: [&str; 10] = [
            "pending",
            "delivered",
            "deferred",
            "failed",
            "retryable_failure",
            "dead_lettered",
            "retry_ready",
            "in_flight",
            "expired",
            "claims_made",
        ];
        if counts.len() != COLUMNS.len() {
            return Err(OutboxError::Database {
                message: format!("the stats query returned {} columns, not 10", counts.len()),
                source: None,
            });
        }
        let column = |name: &str| COLUMNS.iter().position(|c| *c == name).map(|i| counts[i]);
        let oldest = B::fetch_entries(conn, &self.sql.oldest_pending, vec![at.into()]).await?;
        StatsColumns {
            at,
            oldest_pending: oldest.first().map(|(_, e)| e.created_at),
            claims_made: column("claims_made"),
            delivered_estimated: false,
        }
        .read(|name| Ok(column(name)))
    }
}

#[async_trait]
impl<B: PortableBackend> OutboxAdmin for PortableStore<B> {
    async fn stats(&self, req: &crate::StatsRequest) -> Result<OutboxStats> {
        let now = req.now;
        let mut conn = self.connection().await?;
        let stats = self.stats_on(&mut conn, now).await;
        conn.finish(stats)
    }

    async fn dead_letters(&self, req: &crate::DeadLettersRequest) -> Result<Vec<OutboxEntry>> {
        let limit = req.limit;
        self.limits.check_batch_size("limit", limit as usize)?;
        let mut conn = self.connection().await?;
        let params = vec![SqlParam::Time(None), limit.into()];
        let rows = B::fetch_entries(&mut conn, &self.sql.dead_letters, params).await;
        Ok(conn.finish(rows)?.into_iter().map(|(_, e)| e).collect())
    }

    async fn list(&self, req: &crate::ListRequest) -> Result<Vec<OutboxEntry>> {
        crate::store_kit::admin::check_list(req, &self.limits)?;
        let mut conn = self.connection().await?;
        let cursor = SqlParam::Uuid(req.after.map(|id| id.as_uuid()));
        let params = vec![
            SqlParam::Time(None),
            SqlParam::Status(req.status),
            SqlParam::Text(req.topic.clone()),
            SqlParam::Text(req.topic.clone()),
            SqlParam::Text(req.partition_key.clone()),
            SqlParam::Text(req.partition_key.clone()),
            cursor.clone(),
            cursor,
            req.limit.into(),
        ];
        let sql = match req.status {
            EmissionStatus::Delivered => &self.sql.list_delivered,
            _ => &self.sql.list_entries,
        };
        let rows = B::fetch_entries(&mut conn, sql, params).await;
        Ok(conn.finish(rows)?.into_iter().map(|(_, e)| e).collect())
    }

    async fn count_delivered_before(&self, before: DateTime<Utc>) -> Result<u64> {
        let mut conn = self.connection().await?;
        let params = vec![SqlParam::Time(Some(normalize(before)))];
        let counts = B::fetch_counts(&mut conn, &self.sql.count_delivered_before, params).await;
        let n = conn.finish(counts)?.first().copied().unwrap_or(0);
        u64::try_from(n).map_err(|_| OutboxError::Database {
            message: format!("a count came back negative: {n}"),
            source: None,
        })
    }

    async fn requeue(&self, req: &crate::RequeueRequest) -> Result<u64> {
        req.check()?;
        let (from, which, now) = (req.from, req.which.clone(), req.now);
        let mut conn = self.connection().await?;
        let mut params = vec![
            SqlParam::Time(now.map(normalize)),
            Uuid::new_v4().into(),
            SqlParam::Status(from),
        ];
        params.extend(selection(&which));
        let requeued = B::execute(&mut conn, &self.sql.requeue, params).await;
        conn.finish(requeued)
    }

    async fn purge(&self, req: &crate::PurgeRequest) -> Result<u64> {
        req.check()?;
        let (from, which) = (req.from, req.which.clone());
        let mut lease = self.connection().await?;
        let purged = {
            let conn = tokio::sync::Mutex::new(&mut lease);
            crate::store_kit::writes::delete_in_batches(|| async {
                let mut params = vec![SqlParam::Status(from), SqlParam::Status(from)];
                params.extend(selection(&which));
                params.push(crate::store_kit::writes::DELETE_BATCH.into());
                B::execute(&mut **conn.lock().await, &self.sql.purge, params).await
            })
            .await
        };
        lease.finish(purged)
    }
}
