//! One drain cycle: claim, emit with bounded concurrency while renewing leases, complete.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::watch;
use tokio::task::JoinSet;

use super::ahead::{Ahead, Prefetch};
use super::failures::{CycleError, Step};
use super::record::tally;
use super::{Drain, DrainSummary, Emission, EmitOutcome, Emitter};
use crate::{
    Claim, ClaimRequest, Completion, CompletionRequest, EntryId, FindRequest, OutboxEntry,
    RenewOutcome, RenewRequest, Result,
};

/// One entry the cycle works on: leased, or merely found (compatibility path).
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)] // One per entry in flight; boxing would only add an allocation.
pub(super) enum Work {
    Claimed(Claim),
    Found(OutboxEntry),
}

impl Work {
    pub(super) fn entry(&self) -> &OutboxEntry {
        match self {
            Self::Claimed(c) => &c.entry,
            Self::Found(e) => e,
        }
    }
}

/// A mean emission time from which a one-writer store claims ahead (see
/// `AheadPolicy::WhenSlow`).
const SLOW_EMISSION: std::time::Duration = std::time::Duration::from_millis(1);

/// How long a finished emission may wait for others to share its recording.
const RECORD_LINGER: std::time::Duration = std::time::Duration::from_millis(20);

/// What recording a sub-batch gives back: the summary of what it wrote, or the error and
/// the outcomes it took (recorded again with the rest of the batch).
pub(super) type Recorded =
    std::result::Result<DrainSummary, (crate::OutboxError, Vec<(EntryId, EmitOutcome)>)>;

/// A sub-batch of finished emissions being recorded, with their ids.
pub(super) type Recording<'a> =
    std::pin::Pin<Box<dyn std::future::Future<Output = (Vec<EntryId>, Recorded)> + Send + 'a>>;

/// What emitting a batch left to do.
#[derive(Debug, Default)]
struct Emitted {
    /// Outcomes not recorded yet.
    outcomes: HashMap<EntryId, EmitOutcome>,
    /// Emissions that finished, recorded or not.
    finished: u64,
    /// Claims never emitted (the drain stopped) or abandoned after the grace period.
    unstarted: Vec<EntryId>,
    /// Claims whose lease was lost while the batch ran.
    lost: Vec<EntryId>,
    /// What the sub-batches recorded along the way.
    recorded: DrainSummary,
    /// Claims taken in from the batch claimed ahead while this one ran.
    absorbed: Vec<Work>,
    /// Claims of batches claimed ahead whose leases were lost before they were taken in.
    lost_ahead: u64,
}

impl Drain {
    /// One cycle: take a batch (the one claimed ahead, or a fresh claim), emit it, record
    /// it. With `look_ahead`, a full batch starts the claim of the next one, which comes
    /// back with the summary for the next cycle (also when this cycle fails), or the error
    /// that claim met (the caller tells it; this cycle's own summary stands).
    pub(super) async fn cycle(
        &self,
        stop: &watch::Receiver<bool>,
        ahead: Option<Ahead>,
        look_ahead: bool,
    ) -> (
        std::result::Result<DrainSummary, CycleError>,
        Result<Option<Ahead>>,
    ) {
        let mut summary = DrainSummary {
            cycles: 1,
            ..DrainSummary::default()
        };
        let work = match ahead {
            Some(ahead) => self.take_ahead(ahead, &mut summary).await,
            None => match self.acquire().await {
                Ok(work) => work,
                Err(error) => {
                    let step = Step::Claim;
                    return (Err(CycleError { step, error }), Ok(None));
                }
            },
        };
        metrics::histogram!(crate::metric_names::BATCH_SIZE).record(work.len() as f64);
        summary.claimed = work.len() as u64;
        if work.is_empty() {
            return (Ok(summary), Ok(None));
        }
        let full = work.len() >= self.options.batch_size as usize;
        let mut prefetch = if look_ahead && self.claims_ahead_now() && full && !*stop.borrow() {
            Prefetch::start(self)
        } else {
            Prefetch::Off
        };
        let emitted = self
            .emit_all(work.clone(), stop.clone(), &mut prefetch)
            .await;
        summary.claimed += emitted.absorbed.len() as u64;
        summary.emitted = emitted.finished;
        summary.not_applied += emitted.lost.len() as u64 + emitted.lost_ahead;
        summary.add(&emitted.recorded);
        let work: Vec<Work> = work
            .into_iter()
            .chain(emitted.absorbed.iter().cloned())
            .collect();
        let started = Instant::now();
        let record = self.complete(
            &work,
            &emitted.outcomes,
            &emitted.unstarted,
            &emitted.lost,
            &mut summary,
        );
        let recorded = if prefetch.is_running() {
            let (recorded, ()) = tokio::join!(record, prefetch.settle());
            recorded
        } else {
            record.await
        };
        metrics::histogram!(crate::metric_names::COMPLETE_LATENCY)
            .record(started.elapsed().as_secs_f64());
        let next = match prefetch {
            Prefetch::Back(Ok(ahead)) if !ahead.claims.is_empty() => Ok(Some(ahead)),
            Prefetch::Back(Ok(ahead)) => {
                summary.not_applied += ahead.lost;
                Ok(None)
            }
            Prefetch::Back(Err(e)) => Err(e),
            _ => Ok(None),
        };
        let recorded = recorded.map(|()| summary).map_err(|error| CycleError {
            step: Step::Complete,
            error,
        });
        (recorded, next)
    }

    /// The batch claimed ahead, its leases renewed first if they have aged past a renewal
    /// period. If the renewal cannot be made the batch is not emitted: its leases are left
    /// to run out, and the entries are claimed again after them.
    async fn take_ahead(&self, mut ahead: Ahead, summary: &mut DrainSummary) -> Vec<Work> {
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

    /// Gives back the claims of a batch claimed ahead that will not be emitted.
    pub(super) async fn release_ahead(&self, ahead: Ahead) -> DrainSummary {
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
                        reason: Some("drain shutting down".into()),
                    },
                );
                request.now = self.request_time();
                request
            })
            .collect();
        match self.complete_with_retries(requests.clone()).await {
            Ok(results) => {
                for (req, result) in requests.iter().zip(results) {
                    tally(&mut summary, &req.completion, result.outcome);
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "releasing the batch claimed ahead failed; its leases will run out");
                summary.errors += 1;
            }
        }
        summary
    }

    /// Claims retry-ready entries first (they have waited longest), then pending ones.
    async fn acquire(&self) -> Result<Vec<Work>> {
        let o = &self.options;
        if o.use_claim_leases {
            let claims = self.claim_batch().await?;
            Ok(claims.into_iter().map(Work::Claimed).collect())
        } else {
            let started = Instant::now();
            let mut req = FindRequest::new(o.batch_size);
            req.topic = o.topic.clone();
            req.slice = o.slice;
            let mut found = self.store.find_retry_ready(&req).await?;
            let room = o.batch_size - u32::try_from(found.len()).unwrap_or(o.batch_size);
            if room > 0 {
                req.limit = room;
                found.extend(self.store.find_pending(&req).await?);
            }
            metrics::histogram!(crate::metric_names::CLAIM_LATENCY)
                .record(started.elapsed().as_secs_f64());
            Ok(found.into_iter().map(Work::Found).collect())
        }
    }

    /// One claim of a batch: retry-ready entries first, then pending ones.
    pub(super) async fn claim_batch(&self) -> Result<Vec<Claim>> {
        let o = &self.options;
        let started = Instant::now();
        let mut req = ClaimRequest::new(o.owner.clone(), o.batch_size, o.lease);
        req.topic = o.topic.clone();
        req.ordered = o.ordered;
        req.slice = o.slice;
        req.now = self.request_time();
        let claims = self.store.claim_next(&req).await?;
        metrics::histogram!(crate::metric_names::CLAIM_LATENCY)
            .record(started.elapsed().as_secs_f64());
        Ok(claims)
    }

    /// How often held leases are renewed: a third of the lease (at least 10 ms).
    fn renew_period(&self) -> std::time::Duration {
        (self.options.lease / 3)
            .to_std()
            .unwrap_or_default()
            .max(std::time::Duration::from_millis(10))
    }

    /// Emits every item, at most `emit_concurrency` at once. Every claim of the batch is
    /// renewed before its lease runs out until the batch is completed, whether its emission
    /// is waiting, running or done; a claim whose lease was lost before its emission
    /// started is never emitted. The claims of `prefetch`, once back, are renewed on the
    /// same schedule. Returns the outcomes by entry, the items never started (shutdown
    /// came first), and the claims whose lease was lost.
    async fn emit_all(
        &self,
        work: Vec<Work>,
        mut stop: watch::Receiver<bool>,
        prefetch: &mut Prefetch,
    ) -> Emitted {
        let mut running: JoinSet<(EntryId, EmitOutcome, std::time::Duration)> = JoinSet::new();
        let mut emit_time = std::time::Duration::ZERO;
        let mut tasks: HashMap<tokio::task::Id, EntryId> = HashMap::new();
        let mut held: HashMap<EntryId, Claim> = work
            .iter()
            .filter_map(|w| match w {
                Work::Claimed(c) => Some((c.id(), c.clone())),
                Work::Found(_) => None,
            })
            .collect();
        let mut queue: VecDeque<Work> = work.into();
        let mut emitted = Emitted::default();
        // Claimed entries whose emission finished, waiting to be recorded; at most one
        // sub-batch is being recorded at a time.
        let mut finished: Vec<EntryId> = Vec::new();
        let mut first_finished_at: Option<tokio::time::Instant> = None;
        let mut recording: Option<Recording<'_>> = None;
        let mut abandon_at: Option<tokio::time::Instant> = None;
        let period = self.renew_period();
        let mut renew_tick = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
        loop {
            // The emitter is about to run dry: take in the batch claimed ahead and claim
            // the next, so emissions stay in flight across batch boundaries instead of
            // draining to none at the end of every batch.
            if queue.is_empty() && !*stop.borrow() {
                if let Some(mut ahead) = prefetch.take_claims() {
                    if ahead.leased_at.elapsed() >= period && !self.renew_ahead(&mut ahead).await {
                        tracing::error!(owner = %self.options.owner, held = ahead.claims.len(), "could not renew the batch claimed ahead; leaving it to its leases");
                    } else {
                        let full = ahead.claims.len() >= self.options.batch_size as usize;
                        emitted.lost_ahead += ahead.lost;
                        for claim in ahead.claims {
                            held.insert(claim.id(), claim.clone());
                            emitted.absorbed.push(Work::Claimed(claim.clone()));
                            queue.push_back(Work::Claimed(claim));
                        }
                        if full && self.claims_ahead_now() {
                            *prefetch = Prefetch::start(self);
                        }
                    }
                }
            }
            while running.len() < self.options.emit_concurrency && !*stop.borrow() {
                let Some(item) = queue.pop_front() else { break };
                if emitted.lost.contains(&item.entry().id) {
                    continue; // never emit what this worker no longer holds
                }
                let handle = running.spawn(emit_one(
                    self.emitter.clone(),
                    item.entry().clone(),
                    self.options.owner.clone(),
                    self.options.emit_timeout,
                ));
                tasks.insert(handle.id(), item.entry().id);
            }
            if *stop.borrow() && abandon_at.is_none() && !running.is_empty() {
                abandon_at = Some(tokio::time::Instant::now() + self.options.shutdown_grace);
            }
            // A sub-batch goes to the store when the oldest finished emission has waited
            // a linger, or when nothing is left running: a batch whose emissions all end
            // within the linger is still recorded in one call.
            let due = first_finished_at.is_some_and(|t| t.elapsed() >= RECORD_LINGER);
            if recording.is_none() && !finished.is_empty() && (due || running.is_empty()) {
                // At most one store batch per call: when emissions outrun recording, what
                // piled up goes in several calls, never in one the store would refuse.
                let take = finished.len().min(self.record_chunk());
                let ids: Vec<EntryId> = finished.drain(..take).collect();
                if finished.is_empty() {
                    first_finished_at = None;
                }
                recording = Some(self.record_finished(ids, &held, &mut emitted.outcomes));
            }
            if running.is_empty() && recording.is_none() && finished.is_empty() {
                break;
            }
            let linger_until =
                first_finished_at.map_or_else(tokio::time::Instant::now, |t| t + RECORD_LINGER);
            tokio::select! {
                Some(done) = running.join_next_with_id() => {
                    let (id, outcome) = match done {
                        Ok((_, (id, outcome, took))) => {
                            emit_time += took;
                            (id, outcome)
                        }
                        Err(e) if e.is_cancelled() => {
                            // Abandoned at the end of the grace period: released below.
                            emitted.unstarted.push(tasks[&e.id()]);
                            continue;
                        }
                        Err(e) => {
                            let id = tasks[&e.id()];
                            tracing::error!(entry_id = %id, "the emitter panicked; the entry will be retried");
                            (id, EmitOutcome::retryable("the emitter panicked"))
                        }
                    };
                    emitted.finished += 1;
                    if held.contains_key(&id) {
                        finished.push(id);
                        first_finished_at.get_or_insert_with(tokio::time::Instant::now);
                    }
                    emitted.outcomes.insert(id, outcome);
                }
                (ids, result) = async { recording.as_mut().expect("guarded by the precondition").await }, if recording.is_some() => {
                    recording = None;
                    match result {
                        Ok(tallied) => {
                            emitted.recorded.add(&tallied);
                            for id in &ids {
                                held.remove(id);
                            }
                        }
                        // Left for the end of the batch, where a failure is the cycle's.
                        Err((e, taken)) => {
                            tracing::warn!(error = %e, entries = ids.len(), "recording finished emissions failed; will try again with the rest of the batch");
                            emitted.outcomes.extend(taken);
                        }
                    }
                }
                () = tokio::time::sleep_until(linger_until), if recording.is_none() && !finished.is_empty() => {}
                _ = renew_tick.tick() => {
                    emitted.lost.extend(self.renew(&mut held).await.unwrap_or_default());
                    if let Some(ahead) = prefetch.held_mut() {
                        self.renew_ahead(ahead).await;
                    }
                }
                () = prefetch.settle(), if prefetch.is_running() => {}
                () = tokio::time::sleep_until(abandon_at.unwrap_or_else(tokio::time::Instant::now)), if abandon_at.is_some() && !running.is_empty() => {
                    tracing::warn!(running = running.len(), grace = ?self.options.shutdown_grace, "graceful stop: abandoning emissions still running after the grace period; their claims are released");
                    running.abort_all();
                }
                _ = stop.changed() => {}
            }
        }
        let lost = &emitted.lost;
        let unstarted: Vec<EntryId> = queue
            .iter()
            .map(|w| w.entry().id)
            .filter(|id| !lost.contains(id))
            .collect();
        emitted.unstarted.extend(unstarted);
        if emitted.finished > 0 {
            let mean = emit_time / u32::try_from(emitted.finished).unwrap_or(u32::MAX);
            self.slow_emissions
                .store(mean >= SLOW_EMISSION, std::sync::atomic::Ordering::Relaxed);
        }
        emitted
    }

    pub(super) async fn renew(&self, held: &mut HashMap<EntryId, Claim>) -> Option<Vec<EntryId>> {
        if held.is_empty() {
            return Some(Vec::new());
        }
        let claims: Vec<Claim> = held.values().cloned().collect();
        let mut request = RenewRequest::new(self.options.lease);
        request.now = self.request_time();
        match self.store.renew(&claims, &request).await {
            Ok(outcomes) => Some(outcomes
                .into_iter()
                .filter_map(|o| match o {
                    RenewOutcome::Renewed(c) => {
                        held.insert(c.id(), c);
                        None
                    }
                    RenewOutcome::Lost(r) => {
                        metrics::counter!(crate::metric_names::LOST_RENEWALS).increment(1);
                        tracing::warn!(entry_id = %r.entry.id, outcome = %r.outcome, "lease lost while emitting");
                        held.remove(&r.entry.id);
                        Some(r.entry.id)
                    }
                })
                .collect()),
            Err(e) => {
                metrics::counter!(crate::metric_names::FAILED_RENEWALS, "kind" => e.kind())
                    .increment(1);
                tracing::warn!(owner = %self.options.owner, held = claims.len(), error = %e, "lease renewal failed; will try again");
                None
            }
        }
    }
}

async fn emit_one(
    emitter: Arc<dyn Emitter>,
    entry: OutboxEntry,
    owner: String,
    timeout: std::time::Duration,
) -> (EntryId, EmitOutcome, std::time::Duration) {
    let started = Instant::now();
    let emission = Emission {
        entry: &entry,
        delivery_attempt: entry.attempt_count.saturating_add(1),
        owner: &owner,
    };
    let outcome = match tokio::time::timeout(timeout, emitter.emit(emission)).await {
        Ok(outcome) => outcome,
        Err(_) => {
            tracing::warn!(entry_id = %entry.id, ?timeout, "the emission did not finish in time; it will be retried");
            EmitOutcome::retryable(format!("the emission did not finish within {timeout:?}"))
        }
    };
    let took = started.elapsed();
    metrics::histogram!(crate::metric_names::EMIT_LATENCY).record(took.as_secs_f64());
    metrics::counter!(crate::metric_names::EMISSIONS, "result" => outcome.result_tag())
        .increment(1);
    (entry.id, outcome, took)
}
