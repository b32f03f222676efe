//! [`MemoryClaimStore`]: the complete claim store kept in process memory.

mod state;

use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::clock::{normalize, Clock, SystemClock};
use crate::{
    Capabilities, Claim, ClaimRequest, ClaimStore, CompletionRequest, EntryId, FindRequest,
    NewEntry, OutboxAdmin, OutboxEntry, OutboxStats, OutboxStore, PruneRequest, RenewOutcome,
    RenewRequest, Result, StoreLimits, TransitionResult,
};

use state::{Selection, State};

/// A claim store in process memory, safe to share between tasks and threads.
///
/// It is not a test double: it keeps every rule of the contract (ordering, eligibility,
/// tokens, outcomes) and passes the whole conformance suite, so hosts can use it for
/// their own tests and for single-process applications that need no durability. Every
/// call takes one lock, so each check-and-write is atomic.
#[derive(Debug, Clone)]
pub struct MemoryClaimStore {
    state: Arc<Mutex<State>>,
    clock: Arc<dyn Clock>,
    limits: StoreLimits,
}

impl Default for MemoryClaimStore {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryClaimStore {
    /// An empty store on the system clock with default limits.
    pub fn new() -> Self {
        Self {
            state: Arc::default(),
            clock: Arc::new(SystemClock),
            limits: StoreLimits::default(),
        }
    }

    /// Uses `clock` when a request carries no `now`.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Enforces `limits` instead of the defaults.
    pub fn with_limits(mut self, limits: StoreLimits) -> Self {
        self.limits = limits;
        self
    }

    /// How many entries the store holds.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// True when the store holds no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave a half-written entry: every write
        // replaces whole entries, so the state is still consistent.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn now(&self, requested: Option<DateTime<Utc>>) -> DateTime<Utc> {
        requested.map(normalize).unwrap_or_else(|| self.clock.now())
    }
}

#[async_trait]
impl OutboxStore for MemoryClaimStore {
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            name: "memory",
            atomic_completion: true,
            notifications: false,
            concurrent_writes: true,
            ordered_claims: true,
            key_runs: true,
            slice_claims: true,
        }
    }

    fn limits(&self) -> &StoreLimits {
        &self.limits
    }

    async fn enqueue_batch(&self, entries: Vec<NewEntry>) -> Result<Vec<OutboxEntry>> {
        self.limits.check_new_entries(&entries)?;
        let now = self.now(None);
        self.lock().insert_all(entries, now)
    }

    async fn get(&self, id: EntryId) -> Result<Option<OutboxEntry>> {
        Ok(self.lock().get(id).cloned())
    }

    async fn find_pending(&self, req: &FindRequest) -> Result<Vec<OutboxEntry>> {
        self.limits.check_find(req)?;
        let now = self.now(req.now);
        Ok(self
            .lock()
            .find_pending(now, req.limit as usize, Selection::find(req)))
    }

    async fn find_retry_ready(&self, req: &FindRequest) -> Result<Vec<OutboxEntry>> {
        self.limits.check_find(req)?;
        let now = self.now(req.now);
        Ok(self
            .lock()
            .find_retry_ready(now, req.limit as usize, Selection::find(req)))
    }

    async fn save(
        &self,
        entry: &OutboxEntry,
        now: Option<DateTime<Utc>>,
    ) -> Result<TransitionResult> {
        let now = self.now(now);
        Ok(self.lock().save(entry, now))
    }

    async fn prune_delivered(&self, req: &PruneRequest) -> Result<u64> {
        self.limits.check_prune(req)?;
        Ok(self
            .lock()
            .prune_delivered(normalize(req.delivered_before), req.batch_size as usize))
    }
}

#[async_trait]
impl OutboxAdmin for MemoryClaimStore {
    async fn stats(&self, req: &crate::StatsRequest) -> Result<OutboxStats> {
        let now = req.now;
        let now = self.now(now);
        Ok(self.lock().stats(now))
    }

    async fn dead_letters(&self, req: &crate::DeadLettersRequest) -> Result<Vec<OutboxEntry>> {
        let limit = req.limit;
        self.limits.check_batch_size("limit", limit as usize)?;
        Ok(self.lock().dead_letters(limit as usize))
    }

    async fn list(&self, req: &crate::ListRequest) -> Result<Vec<OutboxEntry>> {
        crate::store_kit::admin::check_list(req, &self.limits)?;
        Ok(self.lock().list(req))
    }

    async fn count_delivered_before(&self, before: DateTime<Utc>) -> Result<u64> {
        Ok(self.lock().count_delivered_before(normalize(before)))
    }

    async fn requeue(&self, req: &crate::RequeueRequest) -> Result<u64> {
        req.check()?;
        let (from, which, now) = (req.from, req.which.clone(), req.now);
        let now = self.now(now);
        Ok(self.lock().requeue(from, which, now))
    }

    async fn purge(&self, req: &crate::PurgeRequest) -> Result<u64> {
        req.check()?;
        let (from, which) = (req.from, req.which.clone());
        Ok(self.lock().purge(from, which))
    }
}

#[async_trait]
impl ClaimStore for MemoryClaimStore {
    async fn claim_pending(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.limits.check_claim(req)?;
        let now = self.now(req.now);
        let mut state = self.lock();
        let ids = state
            .find_pending(now, req.batch_size as usize, Selection::claim(req))
            .into_iter()
            .map(|e| e.id)
            .collect::<Vec<_>>();
        Ok(state.claim(&ids, &req.owner, now, req.lease))
    }

    async fn claim_retry_ready(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.limits.check_claim(req)?;
        let now = self.now(req.now);
        let mut state = self.lock();
        let ids = state
            .find_retry_ready(now, req.batch_size as usize, Selection::claim(req))
            .into_iter()
            .map(|e| e.id)
            .collect::<Vec<_>>();
        Ok(state.claim(&ids, &req.owner, now, req.lease))
    }

    async fn complete_batch(&self, reqs: Vec<CompletionRequest>) -> Result<Vec<TransitionResult>> {
        self.limits.check_completions(&reqs)?;
        let mut state = self.lock();
        Ok(reqs
            .iter()
            .map(|req| state.complete(req, self.now(req.now)))
            .collect())
    }

    async fn renew(&self, claims: &[Claim], req: &RenewRequest) -> Result<Vec<RenewOutcome>> {
        self.limits.check_renew(claims, req)?;
        let now = self.now(req.now);
        let mut state = self.lock();
        Ok(claims
            .iter()
            .map(|claim| state.renew(claim, now, req.lease))
            .collect())
    }
}
