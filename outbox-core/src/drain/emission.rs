//! Emitting a batch: at most `emit_concurrency` emissions at once, outside any database
//! transaction. While they run, every claim of the batch and of the batches claimed ahead
//! is renewed on schedule, finished emissions are recorded in sub-batches, and the oldest
//! batch claimed ahead is taken in when the emitter is about to run dry.
//!
//! [`Drain::emit_all`] is one loop: start what may start ([`Batch::take_in_ahead`],
//! [`Batch::start_emissions`], [`Batch::start_recording`]), then wait for the first of:
//! an emission finishing, a recording finishing, the linger running out, the renewal
//! tick, a claim ahead coming back, the grace period ending, or a stop. Every emission
//! that has finished is taken in in one turn of the loop.
//!
//! Each emission is a task of its own, so that emitters' work (encoding, a broker client's
//! bookkeeping) spreads over the runtime's threads. Running them instead as futures of the
//! worker's task was tried: it saved about 1.5 µs of the drain's CPU per entry with a
//! no-op emitter, and cost PostgreSQL drains into RabbitMQ and Kafka 15-25% of their rate.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::stream::{FuturesUnordered, StreamExt};
use tokio::sync::watch;
use tokio::task::{JoinError, JoinSet};
use tracing::Instrument;

use super::ahead::Prefetch;
use super::work::{Recorded, Recording, Work};
use super::{Drain, DrainSummary, Emission, EmitOutcome, Emitter};
use crate::{Claim, EntryId, OutboxEntry};

/// A mean emission time from which a one-writer store claims ahead (see
/// `AheadPolicy::WhenSlow`).
const SLOW_EMISSION: Duration = Duration::from_millis(1);

/// How long a finished emission may wait for others to share its recording.
const RECORD_LINGER: Duration = Duration::from_millis(20);

/// What one emission task gives back: the entry, what the emitter said, how long it took.
type Emitting = (EntryId, EmitOutcome, Duration);

/// What emitting a batch left to do.
#[derive(Debug, Default)]
pub(super) struct Emitted {
    /// Outcomes not recorded yet.
    pub(super) outcomes: HashMap<EntryId, EmitOutcome>,
    /// Emissions that finished, recorded or not.
    pub(super) finished: u64,
    /// Claims never emitted (the drain stopped) or abandoned after the grace period.
    pub(super) unstarted: Vec<EntryId>,
    /// Claims whose lease was lost while the batch ran.
    pub(super) lost: Vec<EntryId>,
    /// What the sub-batches recorded along the way.
    pub(super) recorded: DrainSummary,
    /// Claims taken in from the batch claimed ahead while this one ran.
    pub(super) absorbed: Vec<Work>,
    /// Claims of batches claimed ahead whose leases were lost before they were taken in.
    pub(super) lost_ahead: u64,
    /// Emissions that met a failing route.
    pub(super) route_failures: u64,
    /// A probe met a failing route: nothing more of the batch was started, and what was
    /// not is released.
    pub(super) route_held: bool,
    /// In key order, the claims of a run left behind an entry of their key that was not
    /// delivered (or whose lease was lost): never emitted, released.
    pub(super) behind_failure: Vec<EntryId>,
}

/// The state of one batch being emitted.
struct Batch<'a> {
    drain: &'a Drain,
    /// Items not started yet, in claim order.
    queue: VecDeque<Work>,
    /// Emissions running, and the entry of each task.
    running: JoinSet<Emitting>,
    tasks: HashMap<tokio::task::Id, EntryId>,
    /// In key order, the partition key of each keyed emission running: a key's next
    /// entry starts only when the one before it was delivered.
    running_keys: HashMap<EntryId, String>,
    /// The claims held until their outcome is recorded.
    held: HashMap<EntryId, Claim>,
    /// Claimed entries whose emission finished, waiting to be recorded, and when the
    /// oldest of them finished.
    finished: Vec<EntryId>,
    first_finished_at: Option<tokio::time::Instant>,
    /// The sub-batches being recorded: as many at once as the store takes writes side by
    /// side ([`Drain::recordings_at_once`]).
    recordings: FuturesUnordered<Recording<'a>>,
    /// The claims in those recordings: not renewed meanwhile (a renewal racing a
    /// completion that committed would report the recorded claim lost).
    in_recording: HashSet<EntryId>,
    /// When emissions still running are abandoned, once the drain was told to stop, and
    /// whether they were (they are aborted once; their cancelled tasks are joined after).
    abandon_at: Option<tokio::time::Instant>,
    abandoned: bool,
    /// Time spent in finished emissions.
    emit_time: Duration,
    emitted: Emitted,
}

impl<'a> Batch<'a> {
    fn new(drain: &'a Drain, work: Vec<Work>) -> Self {
        let held = work
            .iter()
            .filter_map(|w| match w {
                Work::Claimed(c) => Some((c.id(), c.clone())),
                Work::Found(_) => None,
            })
            .collect();
        Self {
            drain,
            queue: work.into(),
            running: JoinSet::new(),
            tasks: HashMap::new(),
            running_keys: HashMap::new(),
            held,
            finished: Vec::new(),
            first_finished_at: None,
            recordings: FuturesUnordered::new(),
            in_recording: HashSet::new(),
            abandon_at: None,
            abandoned: false,
            emit_time: Duration::ZERO,
            emitted: Emitted::default(),
        }
    }

    /// When the emitter is about to run dry, takes in the oldest batch claimed ahead and
    /// tops the claims ahead up again, so emissions stay in flight across batch boundaries
    /// instead of draining to none at the end of every batch.
    async fn take_in_ahead(&mut self, prefetch: &mut Prefetch, period: Duration) {
        if !self.queue.is_empty() {
            return;
        }
        let Some(mut ahead) = prefetch.take_claims() else {
            return;
        };
        let drain = self.drain;
        if ahead.leased_at.elapsed() >= period && !drain.renew_ahead(&mut ahead).await {
            tracing::error!(owner = %drain.options.owner, held = ahead.claims.len(), "could not renew the batch claimed ahead; leaving it to its leases");
            prefetch.count_lost(ahead.lost);
            self.emitted.recorded.errors += 1;
            return;
        }
        let full = ahead.claims.len() >= drain.options.batch_size as usize;
        // A batch taken in is a batch claimed, as much as the one the cycle started with.
        metrics::histogram!(crate::metric_names::BATCH_SIZE).record(ahead.claims.len() as f64);
        self.emitted.lost_ahead += ahead.lost;
        for claim in ahead.claims {
            self.held.insert(claim.id(), claim.clone());
            self.emitted.absorbed.push(Work::Claimed(claim.clone()));
            self.queue.push_back(Work::Claimed(claim));
        }
        if full {
            prefetch.fill(drain);
        }
    }

    /// Starts emissions up to the concurrency limit; never one whose lease was lost.
    fn start_emissions(&mut self) {
        let options = &self.drain.options;
        // While a route is failing, one at a time: a probe.
        let at_once = if self.drain.route.probing() {
            1
        } else {
            options.emit_concurrency
        };
        while self.running.len() < at_once {
            let Some(item) = self.next_startable() else {
                break;
            };
            if self.emitted.lost.contains(&item.entry().id) {
                continue; // never emit what this worker no longer holds
            }
            if options.ordered {
                if let Some(key) = &item.entry().partition_key {
                    self.running_keys.insert(item.entry().id, key.clone());
                }
            }
            let handle = self.running.spawn(emit_one(
                self.drain.emitter.clone(),
                Arc::clone(item.shared()),
                Arc::clone(&self.drain.owner),
                options.emit_timeout,
            ));
            self.tasks.insert(handle.id(), item.entry().id);
        }
    }

    /// The next item to emit: the first in claim order, but in key order never one whose
    /// key has an emission running or an earlier entry waiting (a run is emitted one
    /// entry after the other).
    fn next_startable(&mut self) -> Option<Work> {
        if !self.drain.options.ordered {
            return self.queue.pop_front();
        }
        let running: HashSet<&str> = self.running_keys.values().map(String::as_str).collect();
        let mut seen = HashSet::new();
        let at = self.queue.iter().position(|w| {
            w.entry().partition_key.as_deref().is_none_or(|key| {
                let first_of_key = seen.insert(key);
                first_of_key && !running.contains(key)
            })
        })?;
        self.queue.remove(at)
    }

    /// In key order, stops the run of `key` after an entry that was not delivered or whose
    /// lease was lost: its entries still waiting are never emitted, and are released.
    fn stop_run(&mut self, key: Option<&str>) {
        let Some(key) = key.filter(|_| self.drain.options.ordered) else {
            return;
        };
        let (behind, rest): (VecDeque<Work>, VecDeque<Work>) = std::mem::take(&mut self.queue)
            .into_iter()
            .partition(|w| w.entry().partition_key.as_deref() == Some(key));
        self.queue = rest;
        self.emitted
            .behind_failure
            .extend(behind.iter().map(|w| w.entry().id));
    }

    /// Sends sub-batches to the store when the oldest finished emission has waited a
    /// linger, or when nothing is left running: a batch whose emissions all end within
    /// the linger is still recorded in one call. At most one store batch per call: when
    /// emissions outrun recording, what piled up goes in several calls, never in one the
    /// store would refuse, and no more at once than the store takes side by side.
    fn start_recording(&mut self) {
        while self.recordings.len() < self.drain.recordings_at_once() && !self.finished.is_empty() {
            let due = self
                .first_finished_at
                .is_some_and(|t| t.elapsed() >= RECORD_LINGER);
            if !(due || self.running.is_empty()) {
                return;
            }
            let take = self.finished.len().min(self.drain.record_chunk());
            let ids: Vec<EntryId> = self.finished.drain(..take).collect();
            if self.finished.is_empty() {
                self.first_finished_at = None;
            }
            self.in_recording.extend(ids.iter().copied());
            let recording = self
                .drain
                .record_finished(ids, &self.held, &mut self.emitted.outcomes);
            self.recordings.push(recording);
        }
    }

    /// Whether nothing is running, being recorded or waiting to be.
    fn is_done(&self) -> bool {
        self.running.is_empty() && self.recordings.is_empty() && self.finished.is_empty()
    }

    /// When the waiting finished emissions are due to be recorded.
    fn linger_until(&self) -> tokio::time::Instant {
        self.first_finished_at
            .map_or_else(tokio::time::Instant::now, |t| t + RECORD_LINGER)
    }

    /// Takes in what an emission task gave back.
    fn emission_ended(&mut self, done: Result<(tokio::task::Id, Emitting), JoinError>) {
        let (id, outcome) = match done {
            Ok((_, (id, outcome, took))) => {
                self.emit_time += took;
                (id, outcome)
            }
            Err(e) if e.is_cancelled() => {
                // Abandoned at the end of the grace period: released with the batch.
                let id = self.tasks[&e.id()];
                self.running_keys.remove(&id);
                self.emitted.unstarted.push(id);
                return;
            }
            Err(e) => {
                let id = self.tasks[&e.id()];
                tracing::error!(entry_id = %id, "the emitter panicked; the entry will be retried");
                (id, EmitOutcome::retryable("the emitter panicked"))
            }
        };
        self.emitted.finished += 1;
        let key = self.running_keys.remove(&id);
        if !matches!(outcome, EmitOutcome::Delivered { .. }) {
            self.stop_run(key.as_deref());
        }
        let drain = self.drain;
        if let EmitOutcome::RouteFailed {
            fault,
            destination,
            error,
        } = &outcome
        {
            self.emitted.route_failures += 1;
            let failure = (*fault, destination.as_str(), error.as_str());
            let (owner, policy, now) = (
                &drain.options.owner,
                &drain.options.route,
                drain.clock.now(),
            );
            if drain
                .route
                .failed(owner, drain.emitter.name(), failure, policy, now)
            {
                self.emitted.route_held = true;
            }
        } else {
            drain.route.passed(&drain.options.owner, id);
        }
        if self.held.contains_key(&id) {
            self.finished.push(id);
            self.first_finished_at
                .get_or_insert_with(tokio::time::Instant::now);
        }
        self.emitted.outcomes.insert(id, outcome);
    }

    /// Takes in what a sub-batch's recording gave back. Its claims are no longer held;
    /// a failure leaves their outcomes for the end of the batch, where it is the cycle's.
    fn recording_ended(&mut self, ids: Vec<EntryId>, result: Recorded) {
        for id in &ids {
            self.in_recording.remove(id);
        }
        match result {
            Ok(tallied) => {
                self.emitted.recorded.add(&tallied);
                for id in &ids {
                    self.held.remove(id);
                }
            }
            Err((e, taken)) => {
                tracing::warn!(error = %e, entries = ids.len(), "recording finished emissions failed; will try again with the rest of the batch");
                self.emitted.outcomes.extend(taken);
            }
        }
    }

    /// Renews every claim held but those being recorded, and those of the batches
    /// claimed ahead.
    async fn renew(&mut self, prefetch: &mut Prefetch) {
        let recording = &self.in_recording;
        let mut renewing: HashMap<EntryId, Claim> = self
            .held
            .iter()
            .filter(|(id, _)| !recording.contains(id))
            .map(|(id, claim)| (*id, claim.clone()))
            .collect();
        let lost = self.drain.renew(&mut renewing).await.unwrap_or_default();
        for id in &lost {
            if let Some(claim) = self.held.remove(id) {
                self.stop_run(claim.entry.partition_key.as_deref());
            }
        }
        self.held.extend(renewing);
        self.emitted.lost.extend(lost);
        for ahead in prefetch.held_mut() {
            self.drain.renew_ahead(ahead).await;
        }
    }

    /// What is left: the items never started count as unstarted (but for lost ones), and
    /// the mean emission time tells the drain whether emissions are slow.
    fn finish(mut self) -> Emitted {
        let lost = &self.emitted.lost;
        let unstarted: Vec<EntryId> = self
            .queue
            .iter()
            .map(|w| w.entry().id)
            .filter(|id| !lost.contains(id))
            .collect();
        self.emitted.unstarted.extend(unstarted);
        if self.emitted.finished > 0 {
            let mean = self.emit_time / u32::try_from(self.emitted.finished).unwrap_or(u32::MAX);
            self.drain
                .slow_emissions
                .store(mean >= SLOW_EMISSION, std::sync::atomic::Ordering::Relaxed);
        }
        self.emitted
    }
}

impl Drain {
    /// Emits every item, at most `emit_concurrency` at once. Every claim of the batch is
    /// renewed before its lease runs out until the batch is completed, whether its emission
    /// is waiting, running or done; a claim whose lease was lost before its emission
    /// started is never emitted. The claims of `prefetch`, once back, are renewed on the
    /// same schedule. Returns the outcomes by entry, the items never started (shutdown
    /// came first), and the claims whose lease was lost.
    pub(super) async fn emit_all(
        &self,
        work: Vec<Work>,
        mut stop: watch::Receiver<bool>,
        prefetch: &mut Prefetch,
    ) -> Emitted {
        let mut batch = Batch::new(self, work);
        let period = self.renew_period();
        let mut renew_tick = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
        let mut finished_seen = 0;
        loop {
            if batch.emitted.finished != finished_seen {
                // Emissions ended, maybe while this poll of the worker's task was still
                // running: the task is polled again before any other starts, so that a
                // shutdown that fired meanwhile (polled first, in `Drain::drive`) stops it.
                finished_seen = batch.emitted.finished;
                tokio::task::yield_now().await;
            }
            let stopping = *stop.borrow();
            if !stopping && !batch.emitted.route_held {
                batch.take_in_ahead(prefetch, period).await;
                // Taking in may wait on a renewal, during which a shutdown may fire.
                if !*stop.borrow() {
                    batch.start_emissions();
                }
            }
            if stopping && batch.abandon_at.is_none() && !batch.running.is_empty() {
                batch.abandon_at = Some(tokio::time::Instant::now() + self.options.shutdown_grace);
            }
            batch.start_recording();
            if batch.is_done() {
                break;
            }
            // What the branches' conditions read, read before their futures borrow.
            let linger_until = batch.linger_until();
            let waiting = !batch.finished.is_empty();
            let recording = !batch.recordings.is_empty();
            let room = batch.recordings.len() < self.recordings_at_once();
            let running = !batch.running.is_empty();
            let abandon_at = batch.abandon_at.filter(|_| !batch.abandoned);
            tokio::select! {
                Some(done) = batch.running.join_next_with_id() => {
                    batch.emission_ended(done);
                    while let Some(done) = batch.running.try_join_next_with_id() {
                        batch.emission_ended(done);
                    }
                }
                Some((ids, result)) = batch.recordings.next(), if recording => {
                    batch.recording_ended(ids, result);
                }
                () = tokio::time::sleep_until(linger_until), if room && waiting => {}
                _ = renew_tick.tick() => batch.renew(prefetch).await,
                () = prefetch.settle(), if prefetch.is_running() => {}
                () = tokio::time::sleep_until(abandon_at.unwrap_or_else(tokio::time::Instant::now)), if abandon_at.is_some() && running => {
                    tracing::warn!(running = batch.running.len(), grace = ?self.options.shutdown_grace, "graceful stop: abandoning emissions still running after the grace period; their claims are released");
                    batch.running.abort_all();
                    batch.abandoned = true;
                }
                _ = stop.changed() => {}
            }
        }
        batch.finish()
    }
}

/// One emission, bounded by `timeout`, with its metrics, in an `outbox.emit` span (a child
/// of the trace context the entry carries, with the `otel` feature).
async fn emit_one(
    emitter: Arc<dyn Emitter>,
    entry: Arc<OutboxEntry>,
    owner: Arc<str>,
    timeout: Duration,
) -> Emitting {
    let started = Instant::now();
    let delivery_attempt = entry.attempt_count.saturating_add(1);
    let span = tracing::info_span!(
        "outbox.emit",
        entry_id = %entry.id,
        topic = %entry.topic,
        attempt = delivery_attempt,
        result = tracing::field::Empty,
    );
    #[cfg(feature = "otel")]
    crate::trace_context::adopt(&span, &entry);
    let emission = Emission {
        entry: &entry,
        delivery_attempt,
        owner: &owner,
    };
    let emitting = tokio::time::timeout(timeout, emitter.emit(emission)).instrument(span.clone());
    let outcome = match emitting.await {
        Ok(outcome) => outcome,
        Err(_) => {
            tracing::warn!(entry_id = %entry.id, ?timeout, "the emission did not finish in time; it will be retried");
            EmitOutcome::retryable(format!("the emission did not finish within {timeout:?}"))
        }
    };
    span.record("result", outcome.result_tag());
    let took = started.elapsed();
    metrics::histogram!(crate::metric_names::EMIT_LATENCY).record(took.as_secs_f64());
    metrics::counter!(crate::metric_names::EMISSIONS, "result" => outcome.result_tag())
        .increment(1);
    (entry.id, outcome, took)
}
