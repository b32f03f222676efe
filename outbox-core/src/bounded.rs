//! A deadline on every call of a store that has none of its own.
//!
//! A server that stops answering without closing the connection (a partition, a frozen
//! VM, a firewall that drops) leaves a call waiting on its socket for as long as the
//! kernel keeps it, often many minutes; meanwhile the caller's leases run out and another
//! worker emits the same entries. [`Bounded`] gives each call a deadline: past it, the
//! call's future is dropped (the stores leave no transaction or lock behind when one is)
//! and the call fails with [`OutboxError::Connection`], which the drain backs off from
//! and tries again. The PostgreSQL store bounds its own calls (and cancels the statement
//! on the server); wrap the others.

use std::future::Future;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::{
    Capabilities, Claim, ClaimRequest, ClaimStore, CompletionRequest, EntryId, FindRequest,
    ListRequest, NewEntry, OutboxAdmin, OutboxEntry, OutboxError, OutboxStats, OutboxStore,
    PruneRequest, RenewOutcome, RenewRequest, Result, StoreLimits, TransitionResult,
};

/// The longest deadline [`Bounded::new`] takes.
pub const MAX_CALL_TIMEOUT: Duration = Duration::from_secs(3_600);

/// A store whose every call fails with [`OutboxError::Connection`] once it has run
/// longer than the deadline. Wrap it in [`crate::Observed`] as any store.
#[derive(Debug, Clone)]
pub struct Bounded<S> {
    inner: S,
    deadline: Duration,
}

impl<S> Bounded<S> {
    /// Bounds every call of `inner` by `deadline` (more than zero, at most
    /// [`MAX_CALL_TIMEOUT`]). Choose it above the slowest call the store makes when
    /// healthy (a large batch, a prune) and below the lease, so a worker cut off from
    /// the server gives up before another worker can reclaim its entries.
    pub fn new(inner: S, deadline: Duration) -> Result<Self> {
        if deadline.is_zero() || deadline > MAX_CALL_TIMEOUT {
            return Err(OutboxError::invalid(
                "call timeout",
                format!("must be more than zero and at most 1 hour, got {deadline:?}"),
            ));
        }
        Ok(Self { inner, deadline })
    }

    /// The wrapped store.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// Each call's deadline.
    pub fn deadline(&self) -> Duration {
        self.deadline
    }

    async fn bound<T>(&self, call: impl Future<Output = Result<T>>) -> Result<T> {
        match tokio::time::timeout(self.deadline, call).await {
            Ok(result) => result,
            Err(_) => Err(OutboxError::Connection {
                message: format!(
                    "no answer from the database within the call's deadline ({:?}); the \
                     call was abandoned, and what it asked may or may not have been applied",
                    self.deadline
                ),
                source: None,
            }),
        }
    }
}

#[async_trait]
impl<S: OutboxStore> OutboxStore for Bounded<S> {
    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }

    fn limits(&self) -> &StoreLimits {
        self.inner.limits()
    }

    fn wake_signal(&self) -> Option<std::sync::Arc<dyn crate::WakeSignal>> {
        self.inner.wake_signal()
    }

    fn writers_beside(&self) -> bool {
        self.inner.writers_beside()
    }

    async fn check_schema(&self) -> Result<()> {
        self.bound(self.inner.check_schema()).await
    }

    async fn enqueue_batch(&self, entries: Vec<NewEntry>) -> Result<Vec<OutboxEntry>> {
        self.bound(self.inner.enqueue_batch(entries)).await
    }

    async fn get(&self, id: EntryId) -> Result<Option<OutboxEntry>> {
        self.bound(self.inner.get(id)).await
    }

    async fn find_pending(&self, req: &FindRequest) -> Result<Vec<OutboxEntry>> {
        self.bound(self.inner.find_pending(req)).await
    }

    async fn find_retry_ready(&self, req: &FindRequest) -> Result<Vec<OutboxEntry>> {
        self.bound(self.inner.find_retry_ready(req)).await
    }

    async fn save(
        &self,
        entry: &OutboxEntry,
        now: Option<DateTime<Utc>>,
    ) -> Result<TransitionResult> {
        self.bound(self.inner.save(entry, now)).await
    }

    async fn prune_delivered(&self, req: &PruneRequest) -> Result<u64> {
        self.bound(self.inner.prune_delivered(req)).await
    }
}

#[async_trait]
impl<S: ClaimStore> ClaimStore for Bounded<S> {
    fn observed(&self) -> bool {
        self.inner.observed()
    }

    async fn claim_pending(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.bound(self.inner.claim_pending(req)).await
    }

    async fn claim_retry_ready(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.bound(self.inner.claim_retry_ready(req)).await
    }

    async fn claim_next(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.bound(self.inner.claim_next(req)).await
    }

    async fn complete_batch(&self, reqs: Vec<CompletionRequest>) -> Result<Vec<TransitionResult>> {
        self.bound(self.inner.complete_batch(reqs)).await
    }

    async fn renew(&self, claims: &[Claim], req: &RenewRequest) -> Result<Vec<RenewOutcome>> {
        self.bound(self.inner.renew(claims, req)).await
    }
}

#[async_trait]
impl<S: OutboxAdmin> OutboxAdmin for Bounded<S> {
    async fn stats(&self, req: &crate::StatsRequest) -> Result<OutboxStats> {
        self.bound(self.inner.stats(req)).await
    }

    async fn live_stats(&self, req: &crate::StatsRequest) -> Result<OutboxStats> {
        self.bound(self.inner.live_stats(req)).await
    }

    async fn topic_stats(&self, limit: u32) -> Result<Vec<crate::TopicStats>> {
        self.bound(self.inner.topic_stats(limit)).await
    }

    async fn dead_letters(&self, req: &crate::DeadLettersRequest) -> Result<Vec<OutboxEntry>> {
        self.bound(self.inner.dead_letters(req)).await
    }

    async fn list(&self, req: &ListRequest) -> Result<Vec<OutboxEntry>> {
        self.bound(self.inner.list(req)).await
    }

    async fn count_delivered_before(&self, before: DateTime<Utc>) -> Result<u64> {
        self.bound(self.inner.count_delivered_before(before)).await
    }

    async fn requeue(&self, req: &crate::RequeueRequest) -> Result<u64> {
        self.bound(self.inner.requeue(req)).await
    }

    async fn purge(&self, req: &crate::PurgeRequest) -> Result<u64> {
        self.bound(self.inner.purge(req)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemoryClaimStore;

    #[test]
    fn deadlines_outside_the_range_are_refused() {
        for bad in [Duration::ZERO, MAX_CALL_TIMEOUT + Duration::from_millis(1)] {
            let err = Bounded::new(MemoryClaimStore::new(), bad).unwrap_err();
            assert!(err.is_invalid_input() && err.to_string().contains("call timeout"));
        }
        assert!(Bounded::new(MemoryClaimStore::new(), MAX_CALL_TIMEOUT).is_ok());
    }

    #[tokio::test]
    async fn calls_within_the_deadline_pass_through() {
        let store = Bounded::new(MemoryClaimStore::new(), Duration::from_secs(5)).unwrap();
        let entry = store
            .enqueue(NewEntry::new("t", b"x".to_vec()))
            .await
            .unwrap();
        assert_eq!(store.get(entry.id).await.unwrap().unwrap().id, entry.id);
        let claims = store
            .claim_next(&ClaimRequest::new("w", 10, chrono::TimeDelta::seconds(30)))
            .await
            .unwrap();
        assert_eq!(claims.len(), 1);
    }
}
