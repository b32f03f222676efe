//! The store contracts: selection-only and claim-capable.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::{
    Claim, ClaimRequest, Completion, CompletionRequest, EmissionError, EmissionResult, EntryId,
    NewEntry, OutboxEntry, RenewOutcome, RenewRequest, Result, StoreLimits, TransitionResult,
};

/// What a store can and cannot do: backend differences as data, read by shared code and
/// by the conformance suite instead of branching on a database's name.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Capabilities {
    /// A short name for logs and reports ("memory", "sqlite", "postgres", "portable-sqlite").
    pub name: &'static str,
    /// True when a completion checks the claim and writes the row in one atomic step, so
    /// `ConcurrencyLost` cannot be reported (another writer can only come before or after).
    pub atomic_completion: bool,
    /// True when the store can wake a drain when entries are enqueued.
    pub notifications: bool,
    /// True when the database serves writes from several connections at once, so a
    /// drain's claim of the next batch and its completion of the current one overlap.
    /// False for one-writer engines (SQLite), where they would only queue behind each
    /// other; a drain then claims ahead only when told to, while emissions are slow, or
    /// while no other writer waits its turn ([`OutboxStore::writers_beside`]).
    pub concurrent_writes: bool,
    /// True when claims can be made in per-key order ([`ClaimRequest::ordered`]) on this
    /// store's table (some stores need the table prepared for it: see their docs).
    pub ordered_claims: bool,
    /// True when a claim in key order takes runs of a key's consecutive entries
    /// ([`ClaimRequest::key_run`]); without, it takes each key's head alone (a run of one).
    pub key_runs: bool,
    /// True when claims and finds can be restricted to a slice ([`ClaimRequest::slice`],
    /// [`FindRequest::slice`]).
    pub slice_claims: bool,
}

impl Capabilities {
    /// A store named `name` that offers none of the optional capabilities; a store sets
    /// the fields of those it has (new fields start false, so a store built on an
    /// earlier release claims nothing it does not do).
    pub const fn new(name: &'static str) -> Self {
        Self {
            name,
            atomic_completion: false,
            notifications: false,
            concurrent_writes: false,
            ordered_claims: false,
            key_runs: false,
            slice_claims: false,
        }
    }

    /// The same capabilities, with [`Capabilities::atomic_completion`] set to `on`.
    pub const fn with_atomic_completion(mut self, on: bool) -> Self {
        self.atomic_completion = on;
        self
    }

    /// The same capabilities, with [`Capabilities::notifications`] set to `on`.
    pub const fn with_notifications(mut self, on: bool) -> Self {
        self.notifications = on;
        self
    }

    /// The same capabilities, with [`Capabilities::concurrent_writes`] set to `on`.
    pub const fn with_concurrent_writes(mut self, on: bool) -> Self {
        self.concurrent_writes = on;
        self
    }

    /// The same capabilities, with [`Capabilities::ordered_claims`] set to `on`.
    pub const fn with_ordered_claims(mut self, on: bool) -> Self {
        self.ordered_claims = on;
        self
    }

    /// The same capabilities, with [`Capabilities::key_runs`] set to `on`.
    pub const fn with_key_runs(mut self, on: bool) -> Self {
        self.key_runs = on;
        self
    }

    /// The same capabilities, with [`Capabilities::slice_claims`] set to `on`.
    pub const fn with_slice_claims(mut self, on: bool) -> Self {
        self.slice_claims = on;
        self
    }

    /// Refuses a claim request that asks for what this store cannot do (per-key order
    /// without [`Capabilities::ordered_claims`], a slice without
    /// [`Capabilities::slice_claims`]), rather than ignoring it.
    pub fn check_claim(&self, req: &ClaimRequest) -> Result<()> {
        let missing = if req.ordered && !self.ordered_claims {
            "claim in per-key order on this table (where the store can, the table is \
             prepared with `outbox migrate --ordered` or the store crate's \
             enable_ordered_claims)"
        } else if req.slice.is_some() && !self.slice_claims {
            "claim by slice"
        } else {
            return Ok(());
        };
        Err(self.unsupported(missing))
    }

    /// Refuses a find by slice on a store without [`Capabilities::slice_claims`].
    pub fn check_find(&self, req: &FindRequest) -> Result<()> {
        if req.slice.is_some() && !self.slice_claims {
            return Err(self.unsupported("find by slice"));
        }
        Ok(())
    }

    fn unsupported(&self, what: &str) -> crate::OutboxError {
        crate::OutboxError::Unsupported(format!("the {} store cannot {what}", self.name))
    }
}

/// A selection-only query: the oldest eligible entries, without claiming them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FindRequest {
    /// How many entries at most (1 ..= the store's maximum batch size).
    pub limit: u32,
    /// Eligibility is judged at this time; `None` takes the store's clock.
    pub now: Option<DateTime<Utc>>,
    /// Only entries of this topic.
    pub topic: Option<String>,
    /// Only entries of this slice (see [`crate::Slice`]): N workers that find over the N
    /// slices of a table find disjoint entries. Stores without
    /// [`Capabilities::slice_claims`] refuse it.
    pub slice: Option<crate::Slice>,
}

impl FindRequest {
    /// Up to `limit` entries eligible now.
    pub fn new(limit: u32) -> Self {
        Self {
            limit,
            now: None,
            topic: None,
            slice: None,
        }
    }

    /// Judges eligibility at `now`.
    pub fn at(mut self, now: DateTime<Utc>) -> Self {
        self.now = Some(now);
        self
    }

    /// Finds only the entries of `slice`.
    pub fn slice(mut self, slice: crate::Slice) -> Self {
        self.slice = Some(slice);
        self
    }
}

/// Deletes delivered entries older than a cut-off, a bounded batch at a time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PruneRequest {
    /// Delivered entries whose delivery time is before this are deleted.
    pub delivered_before: DateTime<Utc>,
    /// At most this many rows per statement, so no call holds long locks.
    pub batch_size: u32,
}

/// A wake-up a store raises when entries are enqueued (PostgreSQL's LISTEN/NOTIFY, say),
/// so an idle drain can stop waiting early. It is only a hint: a missed wake-up costs one
/// poll interval, never an entry, because the drain keeps polling.
#[async_trait]
pub trait WakeSignal: Send + Sync {
    /// Waits until a wake-up arrives or `timeout` passes; true when woken.
    async fn wait(&self, timeout: std::time::Duration) -> bool;
}

/// The selection-only outbox: for one worker, or workers on disjoint partitions.
///
/// Two workers that both find and emit the same entry both emit it; use [`ClaimStore`]
/// when several workers read the same rows.
#[async_trait]
pub trait OutboxStore: Send + Sync {
    /// What this store can do.
    fn capabilities(&self) -> Capabilities;

    /// The bounds this store enforces on its inputs.
    fn limits(&self) -> &StoreLimits;

    /// The store's enqueue wake-up, if it has one.
    fn wake_signal(&self) -> Option<std::sync::Arc<dyn WakeSignal>> {
        None
    }

    /// On an engine with one writer at a time (no [`Capabilities::concurrent_writes`]):
    /// whether another writer (the host's transactions, an operator, another drain) held
    /// the database's write lock while this store waited for it, lately. A drain left to
    /// decide claims its next batch ahead on such a store only while this is false, or
    /// while emissions are slow, so that writers beside it keep their turns at the lock.
    /// `true` unless the store can tell, which keeps a drain from claiming ahead.
    fn writers_beside(&self) -> bool {
        true
    }

    /// Reads the schema version the database records again and judges it as the store's
    /// build did: a store that opened inside its compatibility window refuses once a
    /// contracting migration moved the window past it ([`crate::OutboxError::SchemaPastWindow`]).
    /// The drain calls it every [`crate::DrainOptions::schema_check_interval`]. Stores
    /// without a schema (in memory) have nothing to check.
    async fn check_schema(&self) -> Result<()> {
        Ok(())
    }

    /// Writes one new pending entry.
    async fn enqueue(&self, entry: NewEntry) -> Result<OutboxEntry> {
        let mut written = self.enqueue_batch(vec![entry]).await?;
        Ok(written.remove(0))
    }

    /// Writes many new pending entries atomically: all of them or none.
    async fn enqueue_batch(&self, entries: Vec<NewEntry>) -> Result<Vec<OutboxEntry>>;

    /// Reads one entry.
    async fn get(&self, id: EntryId) -> Result<Option<OutboxEntry>>;

    /// The oldest pending entries eligible at the request's time (created time, then id),
    /// whether or not someone holds a lease on them.
    async fn find_pending(&self, req: &FindRequest) -> Result<Vec<OutboxEntry>>;

    /// The retry-ready entries (deferred or retryable failure whose retry time has come),
    /// ordered by retry time (or last update without one), then id.
    async fn find_retry_ready(&self, req: &FindRequest) -> Result<Vec<OutboxEntry>>;

    /// Writes the outcome fields of `entry` if its stamp is still the durable one.
    ///
    /// `Applied` when written; `ConcurrencyLost` when the stamp changed (the entry is the
    /// durable winner); `Terminal` when the row is already terminal; `Missing` when gone.
    async fn save(
        &self,
        entry: &OutboxEntry,
        now: Option<DateTime<Utc>>,
    ) -> Result<TransitionResult>;

    /// Deletes up to one batch of delivered entries delivered before the cut-off and
    /// returns how many went; call again until it returns 0 to prune everything.
    async fn prune_delivered(&self, req: &PruneRequest) -> Result<u64>;
}

/// The claim-capable outbox: workers lease entries before emitting them.
///
/// Every completion proves the lease by owner and token, clears the claim fields, and
/// reports whether *this* call applied it.
#[async_trait]
pub trait ClaimStore: OutboxStore {
    /// Whether this store counts and logs its own transitions ([`crate::Observed`] does);
    /// when it does not, the drain does it for the completions it makes.
    fn observed(&self) -> bool {
        false
    }

    /// Leases up to `batch_size` claimable pending entries in pending order.
    async fn claim_pending(&self, req: &ClaimRequest) -> Result<Vec<Claim>>;

    /// Leases up to `batch_size` retry-ready entries in retry order.
    async fn claim_retry_ready(&self, req: &ClaimRequest) -> Result<Vec<Claim>>;

    /// Leases up to `batch_size` entries: retry-ready ones first, in retry order (they have
    /// waited longest), then pending ones in pending order. What the drain claims each cycle.
    ///
    /// The default makes the two claims one after the other; a store that can take both
    /// groups in one round trip overrides it. If the pending claim fails after retry-ready
    /// entries were leased, those are returned rather than stranded until their leases end.
    async fn claim_next(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        let mut claims = self.claim_retry_ready(req).await?;
        let taken = u32::try_from(claims.len()).unwrap_or(req.batch_size);
        let room = req.batch_size.saturating_sub(taken);
        if room == 0 {
            return Ok(claims);
        }
        let mut rest = req.clone();
        rest.batch_size = room;
        match self.claim_pending(&rest).await {
            Ok(more) => claims.extend(more),
            Err(e) if !claims.is_empty() => {
                tracing::warn!(error = %e, "claiming pending entries failed; keeping the retry-ready ones");
            }
            Err(e) => return Err(e),
        }
        Ok(claims)
    }

    /// Records many completions in one call; one result per request, in input order,
    /// each the same as completing that claim alone would give.
    async fn complete_batch(&self, reqs: Vec<CompletionRequest>) -> Result<Vec<TransitionResult>>;

    /// Extends the leases of `claims` that are still held; the others come back as lost.
    async fn renew(&self, claims: &[Claim], req: &RenewRequest) -> Result<Vec<RenewOutcome>>;

    /// Records one completion.
    async fn complete(&self, req: CompletionRequest) -> Result<TransitionResult> {
        let mut results = self.complete_batch(vec![req]).await?;
        Ok(results.remove(0))
    }

    /// Marks a claimed entry delivered.
    async fn mark_delivered(
        &self,
        claim: &Claim,
        result: EmissionResult,
    ) -> Result<TransitionResult> {
        self.complete(CompletionRequest::new(
            claim.clone(),
            Completion::Delivered(result),
        ))
        .await
    }

    /// Marks a claimed entry failed: a retryable failure when `next_retry` is given,
    /// failed (waiting for an operator) when not.
    async fn mark_failed(
        &self,
        claim: &Claim,
        error: EmissionError,
        next_retry: Option<DateTime<Utc>>,
    ) -> Result<TransitionResult> {
        self.complete(CompletionRequest::new(
            claim.clone(),
            Completion::Failed { error, next_retry },
        ))
        .await
    }

    /// Dead-letters a claimed entry.
    async fn mark_dead_lettered(
        &self,
        claim: &Claim,
        error: EmissionError,
        reason: Option<String>,
    ) -> Result<TransitionResult> {
        self.complete(CompletionRequest::new(
            claim.clone(),
            Completion::DeadLettered { error, reason },
        ))
        .await
    }

    /// Writes the outcome fields of `entry` under the claim.
    async fn save_claim(&self, claim: &Claim, entry: OutboxEntry) -> Result<TransitionResult> {
        self.complete(CompletionRequest::new(
            claim.clone(),
            Completion::Save(Box::new(entry)),
        ))
        .await
    }

    /// Gives a lease back without recording an emission.
    async fn release(&self, claim: &Claim, reason: Option<String>) -> Result<TransitionResult> {
        self.complete(CompletionRequest::new(
            claim.clone(),
            Completion::Release { reason },
        ))
        .await
    }
}
