//! Claiming the next batches while the current one is emitted and recorded.
//!
//! Each claim ahead runs as its own task, started when a full batch is taken, up to the
//! drain's depth ([`DrainOptions::batches_ahead`](super::DrainOptions::batches_ahead)), so
//! through a slow link several claims are in flight while a batch is emitted and the one
//! before it recorded. Their claims are held from the moment they come back, in whatever
//! order they come: renewed on the running batch's schedule, at the start of every cycle
//! and while a cycle's last recording runs when they have aged past a renewal period,
//! renewed again before their own emission if they have aged, and released if the drain
//! stops before emitting them. Their age counts from the moment their claim was sent. A
//! claim whose renewal reports it lost is dropped and never emitted. The queue outlives a
//! cycle: a claim still in flight when a cycle ends is the next cycle's batch.

use std::collections::VecDeque;
use std::time::Instant;

use futures_util::FutureExt as _;
use tokio::task::JoinHandle;

use super::work::Work;
use super::{Drain, DrainSummary};
use crate::{Claim, Completion, CompletionRequest, OutboxError, Result};

/// A batch claimed ahead of its turn.
#[derive(Debug)]
pub(super) struct Ahead {
    /// The claims still held, in claim order.
    pub(super) claims: Vec<Claim>,
    /// When their leases were last set: the moment the claim or the renewal was sent
    /// (the lease runs from a moment after it).
    pub(super) leased_at: Instant,
    /// Claims dropped because a renewal reported them lost.
    pub(super) lost: u64,
}

/// What a claim ahead's task gives back: when the claim was sent, and what it claimed.
type Claimed = (Instant, Result<Vec<Claim>>);

/// One batch ahead: its claim running, or back with claims in it.
#[derive(Debug)]
enum Slot {
    Running(JoinHandle<Claimed>),
    Back(Ahead),
}

/// The batches claimed ahead, oldest first.
#[derive(Debug)]
pub(super) struct Prefetch {
    slots: VecDeque<Slot>,
    /// Whether claims ahead may be started at all.
    on: bool,
    /// Claims of batches ahead dropped as lost and never taken in, not yet counted.
    lost: u64,
    /// What failed claims ahead met, not yet reported.
    errors: Vec<OutboxError>,
}

impl Prefetch {
    /// A queue that claims ahead when `on`, up to the drain's depth.
    pub(super) fn new(on: bool) -> Self {
        Self {
            slots: VecDeque::new(),
            on,
            lost: 0,
            errors: Vec::new(),
        }
    }

    /// After a full batch was taken: starts claims until the drain's depth is in flight
    /// or back (none when the drain does not claim ahead now). The claims one call
    /// starts are sent one after another: started together they would only race each
    /// other for the same first rows (each skipping what the other locks), and on MariaDB
    /// one of two such claims can come back empty while rows remain, leaving the drain
    /// short of its depth until its next full batch. Claims started by different calls
    /// still overlap, which is what hides a slow link's round trips.
    pub(super) fn fill(&mut self, drain: &Drain) {
        if !self.on {
            return;
        }
        let turn = std::sync::Arc::new(tokio::sync::Mutex::new(()));
        while self.slots.len() < drain.batches_ahead_now() {
            let drain = drain.clone();
            let turn = turn.clone();
            self.slots.push_back(Slot::Running(tokio::spawn(async move {
                let _turn = turn.lock().await;
                (Instant::now(), drain.claim_batch().await)
            })));
        }
    }

    /// True while a claim is in flight.
    pub(super) fn is_running(&self) -> bool {
        self.slots.iter().any(|s| matches!(s, Slot::Running(_)))
    }

    /// True when nothing is in flight or held.
    pub(super) fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Waits for the oldest claim in flight (forever if there is none: guard with
    /// [`Prefetch::is_running`]). One that failed or came back empty leaves the queue (a
    /// failure is kept for [`Prefetch::take_errors`]). Cancel-safe: the task keeps running
    /// if the wait is dropped.
    pub(super) async fn settle(&mut self) {
        let Some(at) = self
            .slots
            .iter()
            .position(|s| matches!(s, Slot::Running(_)))
        else {
            return std::future::pending().await;
        };
        let Slot::Running(handle) = &mut self.slots[at] else {
            unreachable!("found running above");
        };
        let done = handle.await;
        self.land(at, done);
    }

    /// Takes in every claim ahead that has finished, in whatever order they did.
    fn collect(&mut self) {
        let mut at = 0;
        while at < self.slots.len() {
            let done = match &mut self.slots[at] {
                Slot::Running(handle) => handle.now_or_never(),
                Slot::Back(_) => None,
            };
            let moved_up = match done {
                Some(done) => self.land(at, done),
                None => false,
            };
            if !moved_up {
                at += 1;
            }
        }
    }

    /// Puts what the claim in slot `at` gave back in its place; a failure or an empty
    /// claim leaves the queue (then `true`: the slots after it moved up by one).
    fn land(
        &mut self,
        at: usize,
        done: std::result::Result<Claimed, tokio::task::JoinError>,
    ) -> bool {
        let (sent, claims) = match done {
            Ok((sent, Ok(claims))) => (sent, claims),
            Ok((_, Err(e))) => {
                self.errors.push(e);
                (Instant::now(), Vec::new())
            }
            Err(join) => {
                self.errors.push(OutboxError::Database {
                    message: format!("the claim ahead did not finish: {join}"),
                    source: None,
                });
                (Instant::now(), Vec::new())
            }
        };
        if claims.is_empty() {
            self.slots.remove(at);
            return true;
        }
        self.slots[at] = Slot::Back(Ahead {
            claims,
            leased_at: sent,
            lost: 0,
        });
        false
    }

    /// The oldest batch ahead, if it is back; it is taken out.
    pub(super) fn take_claims(&mut self) -> Option<Ahead> {
        self.collect();
        match self.slots.front() {
            Some(Slot::Back(_)) => match self.slots.pop_front() {
                Some(Slot::Back(ahead)) => Some(ahead),
                _ => None,
            },
            _ => None,
        }
    }

    /// The oldest batch ahead, waiting for claims in flight; `None` when none is left.
    pub(super) async fn next(&mut self) -> Option<Ahead> {
        loop {
            if let Some(ahead) = self.take_claims() {
                return Some(ahead);
            }
            if !self.is_running() {
                return None;
            }
            self.settle().await;
        }
    }

    /// The batches that are back (every finished claim taken in first), to renew.
    pub(super) fn held_mut(&mut self) -> impl Iterator<Item = &mut Ahead> {
        self.collect();
        self.slots.iter_mut().filter_map(|s| match s {
            Slot::Back(ahead) => Some(ahead),
            Slot::Running(_) => None,
        })
    }

    /// Counts lost claims of a batch ahead that will not be taken in.
    pub(super) fn count_lost(&mut self, n: u64) {
        self.lost += n;
    }

    /// The claims found lost since the last call.
    pub(super) fn take_lost(&mut self) -> u64 {
        std::mem::take(&mut self.lost)
    }

    /// The failures of claims ahead since the last call.
    pub(super) fn take_errors(&mut self) -> Vec<OutboxError> {
        std::mem::take(&mut self.errors)
    }
}

impl Drain {
    /// How many batches to hold claimed ahead now: none when told not to, one on a
    /// one-writer store while emissions are slow or no other writer is beside it, else
    /// the configured depth.
    pub(super) fn batches_ahead_now(&self) -> usize {
        match self.claim_ahead {
            super::AheadPolicy::Always => self.options.batches_ahead,
            super::AheadPolicy::Never => 0,
            super::AheadPolicy::WhenSlow => usize::from(self.claims_ahead_now()),
        }
    }

    /// Renews every batch ahead that is back and has aged past a renewal period; one the
    /// store could not be asked about is left for the next call.
    pub(super) async fn renew_aged_ahead(&self, prefetch: &mut Prefetch) {
        let period = self.renew_period();
        for ahead in prefetch.held_mut() {
            if ahead.leased_at.elapsed() >= period {
                self.renew_ahead(ahead).await;
            }
        }
    }

    /// The batch claimed ahead, its leases renewed first if they have aged past a renewal
    /// period. If the renewal cannot be made the batch is not emitted: its leases are left
    /// to run out, and the entries are claimed again after them.
    pub(super) async fn take_ahead(
        &self,
        mut ahead: Ahead,
        summary: &mut DrainSummary,
    ) -> Vec<Work> {
        let confirmed =
            ahead.leased_at.elapsed() < self.renew_period() || self.renew_ahead(&mut ahead).await;
        summary.not_applied += ahead.lost;
        if !confirmed {
            tracing::error!(owner = %self.options.owner, held = ahead.claims.len(), "could not renew the batch claimed ahead; leaving it to its leases");
            summary.errors += 1;
            return Vec::new();
        }
        ahead.claims.into_iter().map(Work::Claimed).collect()
    }

    /// Stops claiming ahead: waits for the claims in flight, then gives back every claim
    /// held ahead that will not be emitted.
    pub(super) async fn release_all_ahead(
        &self,
        prefetch: &mut Prefetch,
        why: &'static str,
    ) -> DrainSummary {
        let mut summary = DrainSummary::default();
        while prefetch.is_running() {
            prefetch.settle().await;
        }
        while let Some(ahead) = prefetch.take_claims() {
            summary.add(&self.release_ahead(ahead, why).await);
        }
        summary.not_applied += prefetch.take_lost();
        summary
    }

    /// Gives back the claims of a batch claimed ahead that will not be emitted.
    async fn release_ahead(&self, ahead: Ahead, why: &'static str) -> DrainSummary {
        let mut summary = DrainSummary {
            claimed: ahead.claims.len() as u64,
            not_applied: ahead.lost,
            ..DrainSummary::default()
        };
        let requests: Vec<CompletionRequest> = ahead
            .claims
            .into_iter()
            .map(|c| {
                let mut request = CompletionRequest::new(
                    c,
                    Completion::Release {
                        reason: Some(why.into()),
                    },
                );
                request.now = self.request_time();
                request
            })
            .collect();
        match self.send_completions(&requests).await {
            Ok(results) => {
                for (req, result) in requests.iter().zip(results) {
                    summary.tally(&req.completion, result.outcome);
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "releasing the batch claimed ahead failed; its leases will run out");
                summary.errors += 1;
            }
        }
        summary
    }
}
