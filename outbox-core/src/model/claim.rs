use std::sync::Arc;

use chrono::{DateTime, TimeDelta, Utc};
use uuid::Uuid;

use super::{OutboxEntry, Slice, TransitionResult};

/// A request to lease a batch of claimable entries.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClaimRequest {
    /// Who claims: a stable worker, process or partition name. Must not be empty.
    pub owner: String,
    /// How many entries at most; between 1 and the store's maximum batch size.
    pub batch_size: u32,
    /// How long the lease lasts; must be positive.
    pub lease: TimeDelta,
    /// The time to judge eligibility and leases by; `None` takes the store's clock
    /// (the database's clock for SQL stores). Tests inject it; production leaves it unset.
    pub now: Option<DateTime<Utc>>,
    /// Only claim entries of this topic.
    pub topic: Option<String>,
    /// Per-key order: of the entries sharing a partition key, only the oldest one not
    /// yet delivered or dead-lettered (by creation time, then id) may be claimed, and
    /// only while no entry of that key is under a live lease. An entry that waits for a
    /// retry, or has failed and waits for an operator, holds back the later entries of
    /// its key. Entries without a key are claimed as usual. Stores whose
    /// [`crate::Capabilities::ordered_claims`] is false refuse such a request.
    pub ordered: bool,
    /// In per-key order, how many consecutive entries of one key the claim may take: the
    /// key's head and the entries right behind it, in key order, as long as each is
    /// pending and due (a run). 1, the default, takes heads only. A run never starts
    /// while an entry of its key is under a live lease, so one key's entries are held by
    /// one claim at a time; the holder emits them in key order (the drain does) and
    /// releases what is left of the run at its first failure. Between 1 and the batch
    /// size, and above 1 only with [`ClaimRequest::ordered`]. A store whose
    /// [`crate::Capabilities::key_runs`] is false takes heads only: a run of one.
    pub key_run: u32,
    /// Only claim entries of this slice (see [`Slice`]). Stores whose
    /// [`crate::Capabilities::slice_claims`] is false refuse such a request.
    pub slice: Option<Slice>,
}

impl ClaimRequest {
    /// A request by `owner` for up to `batch_size` entries leased for `lease`.
    pub fn new(owner: impl Into<String>, batch_size: u32, lease: TimeDelta) -> Self {
        Self {
            owner: owner.into(),
            batch_size,
            lease,
            now: None,
            topic: None,
            ordered: false,
            key_run: 1,
            slice: None,
        }
    }

    /// Judges eligibility at `now` instead of the store's clock.
    pub fn at(mut self, now: DateTime<Utc>) -> Self {
        self.now = Some(now);
        self
    }

    /// Restricts the claim to one topic.
    pub fn topic(mut self, topic: impl Into<String>) -> Self {
        self.topic = Some(topic.into());
        self
    }

    /// Claims in per-key order (see [`ClaimRequest::ordered`]).
    pub fn in_key_order(mut self) -> Self {
        self.ordered = true;
        self
    }

    /// Claims in per-key order, up to `run` consecutive entries of a key at once (see
    /// [`ClaimRequest::key_run`]).
    pub fn in_key_runs(mut self, run: u32) -> Self {
        self.ordered = true;
        self.key_run = run;
        self
    }

    /// Restricts the claim to one slice of the table.
    pub fn slice(mut self, slice: Slice) -> Self {
        self.slice = Some(slice);
        self
    }
}

/// A lease on one entry, held by one owner under one token.
///
/// Only the holder of a claim may emit its entry, and every completion proves the holding
/// by owner and token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// The entry as written by the claim (claim fields set). Shared, so that cloning a
    /// claim (into a completion request, a retry of it, a log) never copies the payload.
    pub entry: Arc<OutboxEntry>,
    /// The owner named in the request.
    pub owner: String,
    /// The lease's token, unique to this acquisition.
    pub token: Uuid,
    /// When the lease was acquired.
    pub claimed_at: DateTime<Utc>,
    /// When the lease runs out.
    pub expires_at: DateTime<Utc>,
    /// Which lease on the entry this is, counting from 1: the row's claim count including
    /// this acquisition. A lease that ran out and was taken again counts, so this may run
    /// ahead of the delivery attempts ([`crate::drain::Emission::delivery_attempt`]).
    pub acquisition: u32,
}

impl Claim {
    /// Builds the claim from an entry whose claim fields are set; `None` when they are not.
    pub fn from_claimed_entry(entry: OutboxEntry) -> Option<Self> {
        Some(Self {
            owner: entry.claim_owner.clone()?,
            token: entry.claim_token?,
            claimed_at: entry.claimed_at?,
            expires_at: entry.claim_expires_at?,
            acquisition: entry.claim_attempt_count,
            entry: Arc::new(entry),
        })
    }

    /// The id of the claimed entry.
    pub fn id(&self) -> super::EntryId {
        self.entry.id
    }
}

/// Parameters of a lease renewal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenewRequest {
    /// The new lease length, counted from `now`; must be positive.
    pub lease: TimeDelta,
    /// The time the new lease counts from; `None` takes the store's clock.
    pub now: Option<DateTime<Utc>>,
}

impl RenewRequest {
    /// Extends leases to `lease` from the store's current time.
    pub fn new(lease: TimeDelta) -> Self {
        Self { lease, now: None }
    }

    /// Counts the new lease from `now`.
    pub fn at(mut self, now: DateTime<Utc>) -> Self {
        self.now = Some(now);
        self
    }
}

/// The result of renewing one claim.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(clippy::large_enum_variant)] // Few and short-lived: one per claim per renewal.
pub enum RenewOutcome {
    /// The lease was still held and now runs until the claim's new `expires_at`.
    Renewed(Claim),
    /// The lease is no longer this claim's: the outcome says why
    /// (`StaleClaim`, `Terminal` or `Missing`), the entry is the durable one.
    Lost(TransitionResult),
}

impl RenewOutcome {
    /// The renewed claim, if the lease was still held.
    pub fn renewed(&self) -> Option<&Claim> {
        match self {
            Self::Renewed(c) => Some(c),
            Self::Lost(_) => None,
        }
    }
}
