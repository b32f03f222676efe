//! Operator work on an outbox: counts, dead letters, requeues.

use std::collections::BTreeMap;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::{
    ClaimStore, DeadLettersRequest, EmissionStatus, EntryId, OutboxEntry, PurgeRequest,
    RequeueRequest, Result, StatsRequest,
};

/// A picture of the outbox at one instant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OutboxStats {
    /// The instant the picture was taken at.
    pub at: DateTime<Utc>,
    /// Rows per status; every status is present, zero included.
    pub counts: BTreeMap<EmissionStatus, u64>,
    /// Creation time of the oldest pending row.
    pub oldest_pending_created_at: Option<DateTime<Utc>>,
    /// Deferred and retryable rows whose retry time has come.
    pub retry_ready: u64,
    /// Non-terminal rows under a lease that has not run out.
    pub claims_in_flight: u64,
    /// Non-terminal rows whose lease ran out without a completion (a crashed or stalled
    /// worker); they are claimable again.
    pub expired_leases: u64,
    /// Claims made of the rows in the table so far: the sum of their claim counts. Rows
    /// deleted (pruned, purged) take theirs with them, so only the difference between two
    /// pictures taken shortly apart makes a rate (claims per second). `None` in a picture
    /// taken by [`OutboxAdmin::live_stats`]: the sum reads every row ever kept.
    pub claims_made: Option<u64>,
    /// True when the delivered count is an estimate: the engine's own idea of how many
    /// rows the table holds, less the rows counted in every other status. Every other
    /// count is exact. Only [`OutboxAdmin::live_stats`] estimates.
    pub delivered_estimated: bool,
    /// Dead row versions and the oldest snapshot keeping them, on engines that keep old
    /// row versions (PostgreSQL); `None` elsewhere.
    pub cleanup: Option<crate::CleanupStats>,
}

impl OutboxStats {
    /// An empty picture at `at`, every count zero.
    pub fn empty(at: DateTime<Utc>) -> Self {
        Self {
            at,
            counts: EmissionStatus::ALL.into_iter().map(|s| (s, 0)).collect(),
            oldest_pending_created_at: None,
            retry_ready: 0,
            claims_in_flight: 0,
            expired_leases: 0,
            claims_made: Some(0),
            delivered_estimated: false,
            cleanup: None,
        }
    }

    /// Rows with `status`.
    pub fn count(&self, status: EmissionStatus) -> u64 {
        self.counts.get(&status).copied().unwrap_or(0)
    }

    /// True when nothing is pending, retry-ready or leased: a drain has nothing left to do
    /// now (rows deferred to a later time may still come due).
    pub fn is_drained(&self) -> bool {
        self.count(EmissionStatus::Pending) == 0
            && self.retry_ready == 0
            && self.claims_in_flight == 0
    }
}

/// One page of entries in one status, for an operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListRequest {
    /// Only entries in this status.
    pub status: EmissionStatus,
    /// Only this topic, if set. Each page still walks the status's index: cheap for the
    /// live statuses, but a topic that is rare among many delivered entries makes a
    /// delivered page read far into the history.
    pub topic: Option<String>,
    /// Only entries with this partition key, if set. Each page still walks the status's
    /// index: cheap for the live statuses, but a key that is rare among many delivered
    /// entries makes a delivered page read far into the history.
    pub partition_key: Option<String>,
    /// At most this many (1 up to the store's batch maximum).
    pub limit: u32,
    /// The page after this entry: the last id of the previous page. Pages of a live
    /// status follow creation order (`created_at`, then id). Delivered entries are the
    /// history, so their pages start at the most recent delivery and go back
    /// (`delivered_at`, newest first; entries delivered at the same instant in an order of
    /// the store's own, the same on every page). An id that is not in the table (or, for
    /// delivered, not delivered) yields an empty page.
    pub after: Option<EntryId>,
}

impl ListRequest {
    /// The first page of up to `limit` entries in `status`, every topic.
    pub fn new(status: EmissionStatus, limit: u32) -> Self {
        Self {
            status,
            topic: None,
            partition_key: None,
            limit,
            after: None,
        }
    }
}

/// Operator operations every store offers, used by the `outbox` command.
#[async_trait]
pub trait OutboxAdmin: Send + Sync {
    /// Counts by status, the oldest pending row, leases in flight and expired, judged at
    /// the request's instant (see [`StatsRequest`]).
    async fn stats(&self, req: &StatsRequest) -> Result<OutboxStats>;

    /// The same picture at the cost of what is live, whatever the history behind it: what
    /// monitoring samples every few seconds. Pending, deferred, failed, retryable,
    /// dead-lettered, the oldest pending row and the lease counts are exact, read through
    /// the indexes that bound those rows. Delivered rows are the history: their count may
    /// be an estimate ([`OutboxStats::delivered_estimated`]), and the claims made of them
    /// are not summed ([`OutboxStats::claims_made`] is `None`). A store without a cheaper
    /// way answers with [`OutboxAdmin::stats`], which is exact.
    async fn live_stats(&self, req: &StatsRequest) -> Result<OutboxStats> {
        self.stats(req).await
    }

    /// What is live per topic: each topic's entries in every status but delivered and its
    /// oldest pending entry, for up to `limit` topics (1 up to [`crate::MAX_TOPICS`]), the
    /// topics with the most live entries first. Read at the cost of what is live, never the
    /// delivered history. The default pages through [`OutboxAdmin::list`]; a store with
    /// one statement for it overrides this.
    async fn topic_stats(&self, limit: u32) -> Result<Vec<crate::TopicStats>> {
        crate::topics::by_listing(self, limit).await
    }

    /// The most recently dead-lettered entries, newest first (see [`DeadLettersRequest`]).
    async fn dead_letters(&self, req: &DeadLettersRequest) -> Result<Vec<OutboxEntry>>;

    /// One page of entries in a status (see [`ListRequest`]).
    async fn list(&self, req: &ListRequest) -> Result<Vec<OutboxEntry>>;

    /// How many delivered entries were delivered before `before`: what a prune with that
    /// cut-off would delete.
    async fn count_delivered_before(&self, before: DateTime<Utc>) -> Result<u64>;

    /// Makes the request's entries pending again with a fresh attempt budget (attempt
    /// count 0, no retry time, no dead-letter reason; the last error is kept). Returns how
    /// many were requeued. Entries in any status but failed and dead-lettered are refused
    /// (see [`RequeueRequest`]).
    async fn requeue(&self, req: &RequeueRequest) -> Result<u64>;

    /// Deletes the request's entries, in bounded batches. Returns how many went. Entries
    /// in any status but failed and dead-lettered are refused (see [`PurgeRequest`]).
    async fn purge(&self, req: &PurgeRequest) -> Result<u64>;
}

/// A claim store that also offers the operator operations.
pub trait AdminClaimStore: ClaimStore + OutboxAdmin {}

impl<T: ClaimStore + OutboxAdmin> AdminClaimStore for T {}

/// Checks a listing request against `limits`.
pub fn check_list(req: &ListRequest, limits: &crate::StoreLimits) -> Result<()> {
    limits.check_batch_size("limit", req.limit as usize)?;
    if let Some(topic) = &req.topic {
        crate::limits::check_name("topic", topic)?;
    }
    if let Some(key) = &req.partition_key {
        crate::limits::check_name("partition key", key)?;
    }
    Ok(())
}

/// The columns of a SQL store's stats statement that are not counts, read by the store's
/// own decoders; [`StatsColumns::read`] adds the counts. Every engine's statement
/// returns the same columns: one count per status named by [`EmissionStatus::as_str`],
/// `retry_ready`, `in_flight`, `expired`, `claims_made`, `oldest_pending` and
/// `delivered_estimated`.
#[derive(Debug, Clone, Copy)]
pub struct StatsColumns {
    /// The database clock the statement read at.
    pub at: DateTime<Utc>,
    /// `oldest_pending`: the creation time of the oldest pending entry.
    pub oldest_pending: Option<DateTime<Utc>>,
    /// `claims_made`: claims made in the table's life, where the engine keeps it.
    pub claims_made: Option<i64>,
    /// `delivered_estimated`: whether the delivered count is the engine's estimate.
    pub delivered_estimated: bool,
}

impl StatsColumns {
    /// The stats, with every count read by `count` (the column's value, `None` for NULL).
    /// A NULL or negative count is a database error naming its column.
    pub fn read(self, count: impl Fn(&str) -> Result<Option<i64>>) -> Result<OutboxStats> {
        let count = |column: &str| {
            count(column)?
                .and_then(|n| u64::try_from(n).ok())
                .ok_or_else(|| crate::OutboxError::Database {
                    message: format!("no valid {column} count"),
                    source: None,
                })
        };
        let mut stats = OutboxStats::empty(self.at);
        for status in EmissionStatus::ALL {
            stats.counts.insert(status, count(status.as_str())?);
        }
        stats.oldest_pending_created_at = self.oldest_pending;
        stats.retry_ready = count("retry_ready")?;
        stats.claims_in_flight = count("in_flight")?;
        stats.expired_leases = count("expired")?;
        stats.claims_made = self.claims_made.map(|n| u64::try_from(n).unwrap_or(0));
        stats.delivered_estimated = self.delivered_estimated;
        Ok(stats)
    }
}

/// Computes statistics from rows, for stores that hold rows in memory.
pub fn stats_of<'a>(
    rows: impl IntoIterator<Item = &'a OutboxEntry>,
    now: DateTime<Utc>,
) -> OutboxStats {
    let mut stats = OutboxStats::empty(now);
    for row in rows {
        *stats.counts.entry(row.status).or_default() += 1;
        stats.claims_made =
            Some(stats.claims_made.unwrap_or(0) + u64::from(row.claim_attempt_count));
        if row.status == EmissionStatus::Pending {
            stats.oldest_pending_created_at = Some(match stats.oldest_pending_created_at {
                Some(t) => t.min(row.created_at),
                None => row.created_at,
            });
        }
        if row.status.is_retry_wait() && row.next_retry_at.is_none_or(|t| t <= now) {
            stats.retry_ready += 1;
        }
        if !row.status.is_terminal() {
            match row.claim_expires_at {
                Some(exp) if exp > now => stats.claims_in_flight += 1,
                Some(_) => stats.expired_leases += 1,
                None => {}
            }
        }
    }
    stats
}

/// Rewrites a dead-lettered entry as pending with a fresh attempt budget.
pub fn requeued(entry: &OutboxEntry, now: DateTime<Utc>) -> OutboxEntry {
    let mut e = entry.clone();
    e.status = EmissionStatus::Pending;
    e.attempt_count = 0;
    e.next_retry_at = None;
    e.dead_letter_reason = None;
    e.claim_owner = None;
    e.claim_token = None;
    e.claimed_at = None;
    e.claim_expires_at = None;
    e.updated_at = now;
    e.stamp = uuid::Uuid::new_v4();
    e
}
