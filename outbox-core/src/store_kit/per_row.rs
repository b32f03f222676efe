//! The per-row algorithm of the portable path, written once for every engine: a claim is
//! one ordered candidate query, then per candidate a re-read and a stamp-checked update
//! (1 + 2N commands for N winners); a completion is a re-read and a guarded update (and
//! a re-read when the update missed); a renewal a guarded update per claim. No engine
//! locking: optimistic concurrency only, judged by the row's stamp, owner and token.
//!
//! An engine supplies [`PortableRows`], the commands on one connection with typed values;
//! it binds them in its own SQL and driver.

#[cfg(feature = "test-hooks")]
use std::future::Future;
#[cfg(feature = "test-hooks")]
use std::pin::Pin;
#[cfg(feature = "test-hooks")]
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::clock::normalize;
use crate::{
    Claim, ClaimRequest, CompletionRequest, EntryId, OutboxEntry, RenewOutcome, RenewRequest,
    Result, TargetState, TransitionOutcome, TransitionResult,
};

/// How often a guarded write is tried again when only the row's stamp moved under a claim
/// that is still held (a renewal of that same claim between the check and the write).
const MAX_WRITE_ATTEMPTS: usize = 3;

/// Which claimable set a claim draws from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimKind {
    /// Pending rows, by created time then id.
    Pending,
    /// Deferred and retryable rows, by retry time (or last update) then id.
    RetryReady,
}

impl ClaimKind {
    /// Whether the re-read `row` may still be claimed by `req` at `now`: claimable of this
    /// kind, of the requested topic and slice.
    pub fn eligible(self, row: &OutboxEntry, req: &ClaimRequest, now: DateTime<Utc>) -> bool {
        let claimable = match self {
            Self::Pending => row.is_pending_claimable(now),
            Self::RetryReady => row.is_retry_claimable(now),
        };
        claimable
            && req.topic.as_deref().is_none_or(|t| row.topic == t)
            && req
                .slice
                .is_none_or(|s| s.contains(row.partition_key.as_deref(), row.id))
    }
}

/// A completion's guarded write: the outcome fields of `target`, written at `now` with a
/// new `stamp`, only while `claim` holds the row and its stamp is still `read_stamp`.
#[derive(Debug, Clone, Copy)]
pub struct CompletionWrite<'a> {
    /// The outcome fields, times normalized.
    pub target: &'a TargetState,
    /// The instant the completion works at.
    pub now: DateTime<Utc>,
    /// The row's new stamp.
    pub stamp: Uuid,
    /// The claim that must still hold the row (owner and token).
    pub claim: &'a Claim,
    /// The stamp the row had when it was read.
    pub read_stamp: Uuid,
}

/// The commands of the portable path on one connection, one round trip each. Values are
/// typed; each engine binds them in its own SQL.
#[async_trait]
pub trait PortableRows: Send {
    /// The ids of up to `req.batch_size` rows of `kind` that `req` may claim, oldest
    /// first, each with the instant the query worked at (`req.now`, or the database's
    /// clock).
    async fn candidates(
        &mut self,
        req: &ClaimRequest,
        kind: ClaimKind,
    ) -> Result<Vec<(DateTime<Utc>, EntryId)>>;

    /// One row, with `now` (or the database's clock when `None`).
    async fn read(
        &mut self,
        id: EntryId,
        now: Option<DateTime<Utc>>,
    ) -> Result<Option<(DateTime<Utc>, OutboxEntry)>>;

    /// The database's clock.
    async fn clock(&mut self) -> Result<DateTime<Utc>>;

    /// Writes the claim fields of `claimed` over its row if the row's stamp is still
    /// `read_stamp`; whether it did.
    async fn claim_row(&mut self, claimed: &OutboxEntry, read_stamp: Uuid) -> Result<bool>;

    /// Stores `hash` as the row's slice hash if it has none (a row written before the
    /// column existed, or by a host's own SQL).
    async fn store_slice_hash(&mut self, id: EntryId, hash: u32) -> Result<()>;

    /// Writes a completion if its guard still holds; whether it did.
    async fn complete_row(&mut self, write: CompletionWrite<'_>) -> Result<bool>;

    /// Sets `claim`'s lease to end at `expires`, with a new `stamp`, if its owner and
    /// token still hold the row; whether they did.
    async fn renew_row(
        &mut self,
        claim: &Claim,
        expires: DateTime<Utc>,
        stamp: Uuid,
    ) -> Result<bool>;
}

/// A writer a test runs once between a check and its write (feature `test-hooks`).
#[cfg(feature = "test-hooks")]
type Writer = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// What runs between a check and its guarded write: nothing, unless a test armed a
/// competing writer (feature `test-hooks`) to put into the window per-row concurrency
/// leaves open, deterministically. Clones share the armed writer.
#[derive(Clone, Default)]
pub struct Interleave {
    #[cfg(feature = "test-hooks")]
    writer: Arc<Mutex<Option<Writer>>>,
}

impl std::fmt::Debug for Interleave {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interleave").finish_non_exhaustive()
    }
}

impl Interleave {
    /// Arms `writer` to run once, at the next check-to-write window.
    #[cfg(feature = "test-hooks")]
    pub fn arm(&self, writer: Writer) {
        *self.writer.lock().unwrap_or_else(|e| e.into_inner()) = Some(writer);
    }

    /// Runs the armed writer, if any, and disarms it.
    async fn run(&self) {
        #[cfg(feature = "test-hooks")]
        {
            let writer = self.writer.lock().unwrap_or_else(|e| e.into_inner()).take();
            if let Some(writer) = writer {
                writer.await;
            }
        }
    }
}

/// Claims up to `req.batch_size` rows of `kind` for `req.owner`; returns only the rows
/// this call won. Validate the request first.
pub async fn claim<R: PortableRows + ?Sized>(
    rows: &mut R,
    req: &ClaimRequest,
    kind: ClaimKind,
    interleave: &Interleave,
) -> Result<Vec<Claim>> {
    let candidates = rows.candidates(req, kind).await?;
    // Every candidate carries the same instant: the request's, or the database's clock as
    // the candidate query saw it. The re-checks and the writes all use it.
    let Some(now) = candidates.first().map(|(at, _)| normalize(*at)) else {
        return Ok(Vec::new());
    };
    let expires = normalize(now + req.lease);
    let mut won = Vec::with_capacity(candidates.len());
    for (_, id) in candidates {
        let Some((_, row)) = rows.read(id, Some(now)).await? else {
            continue; // deleted since the candidate query
        };
        if req
            .slice
            .is_some_and(|s| !s.contains(row.partition_key.as_deref(), row.id))
        {
            // Only a row without a stored hash passes the query's slice filter from
            // another slice. Stored now, it no longer takes this slice's candidate places
            // (without it, a backlog of such rows at the head would fill every list).
            rows.store_slice_hash(row.id, row.slice_hash()).await?;
            continue;
        }
        if !kind.eligible(&row, req, now) {
            continue; // taken or changed since the candidate query
        }
        let read_stamp = row.stamp;
        let mut entry = row;
        entry.claim_owner = Some(req.owner.clone());
        entry.claim_token = Some(Uuid::new_v4());
        entry.claimed_at = Some(now);
        entry.claim_expires_at = Some(expires);
        entry.claim_attempt_count = entry.claim_attempt_count.saturating_add(1);
        entry.stamp = Uuid::new_v4();
        interleave.run().await;
        if rows.claim_row(&entry, read_stamp).await? {
            won.extend(Claim::from_claimed_entry(entry));
        }
    }
    Ok(won)
}

/// `target` with its times at the precision every store keeps.
pub fn normalized(mut target: TargetState) -> TargetState {
    target.next_retry_at = target.next_retry_at.map(normalize);
    target.delivered_at = target.delivered_at.map(normalize);
    target
}

/// Completes one claim: read, check, guarded write, and a re-read that says who won when
/// the write missed. Validate the batch first.
pub async fn complete<R: PortableRows + ?Sized>(
    rows: &mut R,
    req: &CompletionRequest,
    interleave: &Interleave,
) -> Result<TransitionResult> {
    let claim = &req.claim;
    let missing = || TransitionResult::new(TransitionOutcome::Missing, (*claim.entry).clone());
    let Some((now, mut row)) = rows.read(claim.id(), req.now).await? else {
        return Ok(missing());
    };
    let now = normalize(now);
    if let Some(outcome) = TransitionOutcome::precheck_completion(Some(&row), req) {
        return Ok(TransitionResult::new(outcome, row));
    }
    let target = normalized(req.completion.target(&claim.entry));
    interleave.run().await;
    for _ in 0..MAX_WRITE_ATTEMPTS {
        let write = CompletionWrite {
            target: &target,
            now,
            stamp: req.stamp,
            claim,
            read_stamp: row.stamp,
        };
        if rows.complete_row(write).await? {
            target.apply_to(&mut row, now, req.stamp);
            return Ok(TransitionResult::new(TransitionOutcome::Applied, row));
        }
        match rows.read(claim.id(), Some(now)).await? {
            None => return Ok(missing()),
            // Still this claim's, only the stamp moved: write again over the new stamp.
            Some((_, durable)) if TransitionOutcome::precheck(Some(&durable), claim).is_none() => {
                row = durable;
            }
            Some((_, durable)) => {
                return Ok(TransitionResult::new(
                    TransitionOutcome::ConcurrencyLost,
                    durable,
                ))
            }
        }
    }
    Ok(TransitionResult::new(
        TransitionOutcome::ConcurrencyLost,
        row,
    ))
}

/// Completes every claim of a batch in order, one [`complete`] each, stopping at the
/// first error (the caller then discards the connection). Validate the batch first.
pub async fn complete_all<R: PortableRows + ?Sized>(
    rows: &mut R,
    reqs: &[CompletionRequest],
    interleave: &Interleave,
) -> Result<Vec<TransitionResult>> {
    let mut results = Vec::with_capacity(reqs.len());
    for req in reqs {
        results.push(complete(rows, req, interleave).await?);
    }
    Ok(results)
}

/// Extends every lease still held; the others come back lost, in input order. Validate
/// the request first.
pub async fn renew<R: PortableRows + ?Sized>(
    rows: &mut R,
    claims: &[Claim],
    req: &RenewRequest,
) -> Result<Vec<RenewOutcome>> {
    let now = match req.now {
        Some(at) => normalize(at),
        None => normalize(rows.clock().await?),
    };
    let expires = normalize(now + req.lease);
    let mut outcomes = Vec::with_capacity(claims.len());
    'claims: for claim in claims {
        for _ in 0..MAX_WRITE_ATTEMPTS {
            let stamp = Uuid::new_v4();
            if rows.renew_row(claim, expires, stamp).await? {
                // Owner and token matched, so nothing but renewals wrote the row since the
                // claim: the snapshot with the new expiry and stamp is the row.
                let mut entry = (*claim.entry).clone();
                entry.claim_owner = Some(claim.owner.clone());
                entry.claim_token = Some(claim.token);
                entry.claimed_at = Some(claim.claimed_at);
                entry.claim_expires_at = Some(expires);
                entry.stamp = stamp;
                if let Some(renewed) = Claim::from_claimed_entry(entry) {
                    outcomes.push(RenewOutcome::Renewed(renewed));
                    continue 'claims;
                }
            }
            let current = rows.read(claim.id(), Some(now)).await?.map(|(_, e)| e);
            if let Some(outcome) = TransitionOutcome::precheck(current.as_ref(), claim) {
                let entry = current.unwrap_or_else(|| (*claim.entry).clone());
                outcomes.push(RenewOutcome::Lost(TransitionResult::new(outcome, entry)));
                continue 'claims;
            }
        }
        let entry = rows.read(claim.id(), Some(now)).await?;
        let entry = entry.map_or_else(|| (*claim.entry).clone(), |(_, e)| e);
        outcomes.push(RenewOutcome::Lost(TransitionResult::new(
            TransitionOutcome::StaleClaim,
            entry,
        )));
    }
    Ok(outcomes)
}
