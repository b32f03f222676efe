//! Store-level observability: every claimed transition is counted, and every one that was
//! not applied is logged, whoever calls it (the drain or the host's own code).

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::{
    Capabilities, Claim, ClaimRequest, ClaimStore, CompletionRequest, EntryId, FindRequest,
    NewEntry, OutboxEntry, OutboxStore, PruneRequest, RenewOutcome, RenewRequest, Result,
    StoreLimits, TransitionResult,
};

/// Counts one claimed transition and, when it was not applied, logs a warning naming
/// the worker, the entry, the outcome and the durable status.
pub fn record_transition(req: &CompletionRequest, result: &TransitionResult) {
    metrics::counter!(
        crate::metric_names::TRANSITIONS,
        "outcome" => result.outcome.as_str(),
        "durable_status" => result.entry.status.as_str(),
    )
    .increment(1);
    if !result.is_applied() {
        tracing::warn!(
            worker_id = %req.claim.owner,
            entry_id = %req.claim.id(),
            outcome = %result.outcome,
            durable_status = %result.entry.status,
            transition = req.completion.kind(),
            "claimed outbox transition was not applied",
        );
    }
}

/// Wraps any claim store so that its transitions are observed (see [`record_transition`]).
///
/// Stores built by this project's constructors already come wrapped where noted; wrap a
/// store of your own with `Observed::new(store)`.
#[derive(Debug, Clone)]
pub struct Observed<S> {
    inner: S,
}

impl<S> Observed<S> {
    /// Observes `inner`.
    pub fn new(inner: S) -> Self {
        Self { inner }
    }

    /// The wrapped store.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// Unwraps the store.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

/// The wrapped store's own methods (enqueue inside the host's transaction, its pool, its
/// table) are reachable through the wrapper. The store traits resolve to the wrapper's
/// implementations first, so every transition made through it is still observed.
impl<S> std::ops::Deref for Observed<S> {
    type Target = S;

    fn deref(&self) -> &S {
        &self.inner
    }
}

#[async_trait]
impl<S: OutboxStore> OutboxStore for Observed<S> {
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
        self.inner.check_schema().await
    }

    async fn enqueue_batch(&self, entries: Vec<NewEntry>) -> Result<Vec<OutboxEntry>> {
        self.inner.enqueue_batch(entries).await
    }

    async fn get(&self, id: EntryId) -> Result<Option<OutboxEntry>> {
        self.inner.get(id).await
    }

    async fn find_pending(&self, req: &FindRequest) -> Result<Vec<OutboxEntry>> {
        self.inner.find_pending(req).await
    }

    async fn find_retry_ready(&self, req: &FindRequest) -> Result<Vec<OutboxEntry>> {
        self.inner.find_retry_ready(req).await
    }

    async fn save(
        &self,
        entry: &OutboxEntry,
        now: Option<DateTime<Utc>>,
    ) -> Result<TransitionResult> {
        self.inner.save(entry, now).await
    }

    async fn prune_delivered(&self, req: &PruneRequest) -> Result<u64> {
        self.inner.prune_delivered(req).await
    }
}

#[async_trait]
impl<S: ClaimStore> ClaimStore for Observed<S> {
    fn observed(&self) -> bool {
        true
    }

    async fn claim_pending(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.inner.claim_pending(req).await
    }

    async fn claim_retry_ready(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.inner.claim_retry_ready(req).await
    }

    async fn claim_next(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.inner.claim_next(req).await
    }

    async fn complete_batch(&self, reqs: Vec<CompletionRequest>) -> Result<Vec<TransitionResult>> {
        // The requests are kept for the log lines; cloning one shares its claim's entry.
        let results = self.inner.complete_batch(reqs.clone()).await?;
        for (req, result) in reqs.iter().zip(&results) {
            record_transition(req, result);
        }
        Ok(results)
    }

    async fn renew(&self, claims: &[Claim], req: &RenewRequest) -> Result<Vec<RenewOutcome>> {
        self.inner.renew(claims, req).await
    }
}

#[async_trait]
impl<S: crate::OutboxAdmin> crate::OutboxAdmin for Observed<S> {
    async fn stats(&self, req: &crate::StatsRequest) -> Result<crate::OutboxStats> {
        self.inner.stats(req).await
    }

    async fn live_stats(&self, req: &crate::StatsRequest) -> Result<crate::OutboxStats> {
        self.inner.live_stats(req).await
    }

    async fn topic_stats(&self, limit: u32) -> Result<Vec<crate::TopicStats>> {
        self.inner.topic_stats(limit).await
    }

    async fn dead_letters(&self, req: &crate::DeadLettersRequest) -> Result<Vec<OutboxEntry>> {
        self.inner.dead_letters(req).await
    }

    async fn list(&self, req: &crate::ListRequest) -> Result<Vec<OutboxEntry>> {
        self.inner.list(req).await
    }

    async fn count_delivered_before(&self, before: DateTime<Utc>) -> Result<u64> {
        self.inner.count_delivered_before(before).await
    }

    async fn requeue(&self, req: &crate::RequeueRequest) -> Result<u64> {
        self.inner.requeue(req).await
    }

    async fn purge(&self, req: &crate::PurgeRequest) -> Result<u64> {
        self.inner.purge(req).await
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeDelta;
    use metrics_util::debugging::{DebugValue, DebuggingRecorder};

    use super::*;
    use crate::{EmissionResult, MemoryClaimStore, TransitionOutcome};

    #[test]
    fn every_transition_is_counted_with_outcome_and_durable_status() {
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        metrics::with_local_recorder(&recorder, || {
            rt.block_on(async {
                let store = Observed::new(MemoryClaimStore::new());
                store
                    .enqueue(NewEntry::new("t", b"x".to_vec()))
                    .await
                    .unwrap();
                let claim = store
                    .claim_pending(&ClaimRequest::new("w1", 1, TimeDelta::seconds(30)))
                    .await
                    .unwrap()
                    .remove(0);
                let first = store
                    .mark_delivered(&claim, EmissionResult::new())
                    .await
                    .unwrap();
                assert_eq!(first.outcome, TransitionOutcome::Applied);
                let second = store
                    .mark_delivered(&claim, EmissionResult::new())
                    .await
                    .unwrap();
                assert_eq!(second.outcome, TransitionOutcome::Terminal);
            })
        });
        let mut seen: Vec<(String, u64)> = snapshotter
            .snapshot()
            .into_vec()
            .into_iter()
            .filter(|(key, ..)| key.key().name() == crate::metric_names::TRANSITIONS)
            .map(|(key, _, _, value)| {
                let mut labels: Vec<String> = key
                    .key()
                    .labels()
                    .map(|l| format!("{}={}", l.key(), l.value()))
                    .collect();
                labels.sort();
                let DebugValue::Counter(n) = value else {
                    panic!("not a counter")
                };
                (labels.join(","), n)
            })
            .collect();
        seen.sort();
        assert_eq!(
            seen,
            vec![
                ("durable_status=delivered,outcome=applied".to_owned(), 1),
                ("durable_status=delivered,outcome=terminal".to_owned(), 1),
            ]
        );
    }
}

#[cfg(test)]
mod drain_observes {
    use std::sync::Arc;

    use metrics_util::debugging::{DebugValue, DebuggingRecorder};

    use super::*;
    use crate::drain::{Drain, DrainOptions, Emission, EmitOutcome, Emitter};
    use crate::MemoryClaimStore;

    struct Accept;

    #[async_trait]
    impl Emitter for Accept {
        async fn emit(&self, _: Emission<'_>) -> EmitOutcome {
            EmitOutcome::delivered()
        }
    }

    /// Transitions counted while a drain delivers 5 entries from `store`.
    fn counted(store: Arc<dyn ClaimStore>) -> u64 {
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        metrics::with_local_recorder(&recorder, || {
            rt.block_on(async {
                let entries = (0..5).map(|_| NewEntry::new("t", b"x".to_vec())).collect();
                store.enqueue_batch(entries).await.unwrap();
                let drain = Drain::new(store, Arc::new(Accept), DrainOptions::new()).unwrap();
                let summary = drain
                    .run_until(|| std::future::ready(true), std::future::pending::<()>())
                    .await;
                assert_eq!(summary.delivered, 5);
            })
        });
        snapshotter
            .snapshot()
            .into_vec()
            .into_iter()
            .filter(|(key, ..)| key.key().name() == crate::metric_names::TRANSITIONS)
            .map(|(.., value)| match value {
                DebugValue::Counter(n) => n,
                _ => panic!("not a counter"),
            })
            .sum()
    }

    #[test]
    fn a_drain_counts_the_transitions_of_a_store_nobody_observed_once() {
        assert_eq!(counted(Arc::new(MemoryClaimStore::new())), 5);
        assert_eq!(counted(Arc::new(Observed::new(MemoryClaimStore::new()))), 5);
    }
}
