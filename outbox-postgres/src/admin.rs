//! The operator operations of [`PgClaimStore`]: one statement each.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use outbox_core::store_kit::admin::{
    check_topic_limit, topic_stats_of, ListStatements, StatsColumns,
};
use outbox_core::store_kit::sql::normalize_time;
use outbox_core::{
    CleanupStats, HeldSnapshot, ListRequest, OutboxAdmin, OutboxEntry, OutboxError, OutboxStats,
    Result, TableName, TopicStats,
};

use crate::connection::{execute, query};
use crate::error::map_err;
use crate::typed::{typed, Param};
use crate::{row, PgClaimStore};

/// The operator statements, rendered once per table.
#[derive(Debug)]
pub(crate) struct AdminStatements {
    stats: String,
    live_stats: String,
    dead_letters: String,
    requeue: String,
    purge: String,
    list: ListStatements,
    topic_stats: String,
    count_delivered_before: String,
}

impl AdminStatements {
    pub(crate) fn render(table: &TableName) -> Self {
        Self {
            stats: stats_with(table, include_str!("../sql/admin/exact_counts.sql")),
            live_stats: stats_with(table, include_str!("../sql/admin/live_counts.sql")),
            dead_letters: table.render(include_str!("../sql/admin/dead_letters.sql")),
            requeue: table.render(include_str!("../sql/admin/requeue.sql")),
            purge: table.render(include_str!("../sql/admin/purge.sql")),
            list: ListStatements::render(
                include_str!("../sql/admin/list_entries.sql"),
                include_str!("../sql/admin/list_delivered.sql"),
                |sql| table.render(sql),
            ),
            topic_stats: table.render(include_str!("../sql/admin/topic_stats.sql")),
            count_delivered_before: table
                .render(include_str!("../sql/admin/count_delivered_before.sql")),
        }
    }
}

/// The stats statement with its counts read by `counts` (exact_counts.sql or
/// live_counts.sql).
fn stats_with(table: &TableName, counts: &str) -> String {
    table.render(&include_str!("../sql/admin/stats.sql").replace("{counts}", counts))
}

/// A non-negative bigint column.
fn count(row: &tokio_postgres::Row, column: &str) -> Result<u64> {
    let n: i64 = row.try_get(column).map_err(map_err)?;
    u64::try_from(n).map_err(|_| OutboxError::Database {
        message: format!("negative {column} count"),
        source: None,
    })
}

/// The table's dead row versions and the oldest snapshot held elsewhere, from the stats
/// row.
fn cleanup(row: &tokio_postgres::Row) -> Result<CleanupStats> {
    let xmin_age: Option<i64> = row.try_get("xmin_age").map_err(map_err)?;
    let open_for_us: Option<i64> = row.try_get("open_for_us").map_err(map_err)?;
    let holder: Option<String> = row.try_get("holder").map_err(map_err)?;
    let oldest_snapshot = match (xmin_age, holder) {
        (Some(age), Some(holder)) => Some(HeldSnapshot {
            xmin_age: u64::try_from(age).unwrap_or(0),
            open_for: open_for_us
                .map(|us| std::time::Duration::from_micros(u64::try_from(us).unwrap_or(0))),
            holder,
        }),
        _ => None,
    };
    Ok(CleanupStats {
        dead_rows: count(row, "dead_rows")?,
        live_rows: count(row, "live_rows")?,
        dead_index_entries: count(row, "dead_index_entries")?,
        oldest_snapshot,
    })
}

impl PgClaimStore {
    /// The stats as `sql` (exact or live) reads them.
    async fn stats_by(&self, sql: &str, now: Option<DateTime<Utc>>) -> Result<OutboxStats> {
        let now = now.map(normalize_time);
        let name = self.inner.table.qualified();
        let rows = query(&self.inner.db, sql, &[typed(&now), typed(&name)]).await?;
        let row = rows.first().ok_or_else(|| OutboxError::Database {
            message: "the stats query returned no row".into(),
            source: None,
        })?;
        let mut stats = StatsColumns {
            at: row.try_get("at").map_err(map_err)?,
            oldest_pending: row.try_get("oldest_pending").map_err(map_err)?,
            claims_made: row.try_get("claims_made").map_err(map_err)?,
            delivered_estimated: row.try_get("delivered_estimated").map_err(map_err)?,
        }
        .read(|column| row.try_get(column).map_err(map_err))?;
        stats.cleanup = Some(cleanup(row)?);
        Ok(stats)
    }
}

#[async_trait]
impl OutboxAdmin for PgClaimStore {
    async fn stats(&self, req: &outbox_core::StatsRequest) -> Result<OutboxStats> {
        let now = req.now;
        self.stats_by(&self.inner.admin_sql.stats, now).await
    }

    async fn live_stats(&self, req: &outbox_core::StatsRequest) -> Result<OutboxStats> {
        let now = req.now;
        self.stats_by(&self.inner.admin_sql.live_stats, now).await
    }

    async fn topic_stats(&self, limit: u32) -> Result<Vec<TopicStats>> {
        check_topic_limit(limit)?;
        let rows = query(&self.inner.db, &self.inner.admin_sql.topic_stats, &[]).await?;
        topic_stats_of(rows.iter().map(row::topic_group), limit)
    }

    async fn dead_letters(
        &self,
        req: &outbox_core::DeadLettersRequest,
    ) -> Result<Vec<OutboxEntry>> {
        let limit = req.limit;
        self.inner
            .limits
            .check_batch_size("limit", limit as usize)?;
        let limit = i64::from(limit);
        let rows = query(
            &self.inner.db,
            &self.inner.admin_sql.dead_letters,
            &[typed(&limit)],
        )
        .await?;
        rows.iter().map(row::entry).collect()
    }

    async fn list(&self, req: &ListRequest) -> Result<Vec<OutboxEntry>> {
        outbox_core::store_kit::admin::check_list(req, &self.inner.limits)?;
        let after = req.after.map(|id| id.as_uuid());
        let limit = i64::from(req.limit);
        let rows = query(
            &self.inner.db,
            self.inner.admin_sql.list.get(req.status),
            &[
                typed(&req.topic),
                typed(&after),
                typed(&limit),
                typed(&req.partition_key),
            ],
        )
        .await?;
        rows.iter().map(row::entry).collect()
    }

    async fn count_delivered_before(&self, before: DateTime<Utc>) -> Result<u64> {
        let before = normalize_time(before);
        let rows = query(
            &self.inner.db,
            &self.inner.admin_sql.count_delivered_before,
            &[typed(&before)],
        )
        .await?;
        let row = rows.first().ok_or_else(|| OutboxError::Database {
            message: "the count returned no row".into(),
            source: None,
        })?;
        count(row, "n")
    }

    async fn requeue(&self, req: &outbox_core::RequeueRequest) -> Result<u64> {
        req.check()?;
        let (from, which, now) = (req.from, req.which.clone(), req.now);
        let now = now.map(normalize_time);
        let id = which.id().map(|id| id.as_uuid());
        let topic = which.topic().map(str::to_owned);
        let status = from.code();
        execute(
            &self.inner.db,
            &self.inner.admin_sql.requeue,
            &[typed(&now), typed(&id), typed(&status), typed(&topic)],
        )
        .await
    }

    async fn purge(&self, req: &outbox_core::PurgeRequest) -> Result<u64> {
        req.check()?;
        let (from, which) = (req.from, req.which.clone());
        let id = which.id().map(|id| id.as_uuid());
        let topic = which.topic().map(str::to_owned);
        let batch = i64::from(outbox_core::store_kit::writes::DELETE_BATCH);
        let status = from.code();
        let params: [Param<'_>; 4] = [typed(&id), typed(&batch), typed(&status), typed(&topic)];
        outbox_core::store_kit::writes::delete_in_batches(|| {
            execute(&self.inner.db, &self.inner.admin_sql.purge, &params)
        })
        .await
    }
}
