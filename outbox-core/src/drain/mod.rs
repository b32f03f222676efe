//! The drain: workers that claim entries, emit them, and record what happened.

mod ahead;
mod claim;
mod cycle;
mod emission;
mod emitter;
mod failures;
mod options;
mod record;
mod renewal;
mod retry;
mod route;
mod summary;
mod work;

use std::future::Future;
use std::sync::Arc;

use tokio::sync::watch;
use tracing::Instrument;

pub use emitter::{Emission, EmitOutcome, Emitter};
pub mod url_params;
pub use options::{DrainOptions, HeadFailure, DEFAULT_KEY_RUN};
pub use retry::RetryPolicy;
pub use route::{hold_reason, route_holds, RouteFault, RouteHold};
pub use summary::DrainSummary;

use crate::{ClaimStore, Clock, Result, SystemClock};

/// A drain worker over any claim store and any emitter.
///
/// Each cycle claims up to a batch of retry-ready and pending entries, emits them with
/// bounded concurrency outside any database transaction (renewing the leases of emissions
/// that run long), and records every outcome in one batch completion. While a full batch
/// is emitted and recorded, the next ones are claimed where the store can overlap writes
/// (see [`DrainOptions::claim_ahead`] and [`DrainOptions::batches_ahead`]), and finished
/// sub-batches are recorded two at a time there, so at steady state neither the database
/// nor the emitter waits on the other, and a slow link costs a worker about one round
/// trip per batch. It never emits an entry it does not hold. Run several drains, in one
/// process or many, on one store.
///
/// A failure of the emitter's route ([`EmitOutcome::RouteFailed`]: a missing stream, topic
/// or queue, refused credentials, an unreachable broker) is not the entry's: the entry is
/// held, deferred with no attempt counted, and the drain backs off and probes one emission
/// at a time until the route carries again (see [`DrainOptions::route_backoff`] and
/// [`DrainOptions::route_down_limit`]), counting each in `outbox.route_failures`.
///
/// Give it a store wrapped in [`crate::Observed`] to get the store-level transition
/// metric and warnings; the drain adds `outbox.emissions` (tag `result`) and the
/// `outbox.claim_latency_seconds`, `outbox.emit_latency_seconds`,
/// `outbox.complete_latency_seconds` and `outbox.batch_size` histograms.
#[derive(Clone)]
pub struct Drain {
    store: Arc<dyn ClaimStore>,
    emitter: Arc<dyn Emitter>,
    options: DrainOptions,
    clock: Arc<dyn Clock>,
    /// Stamp every store request with `clock`'s time (tests), instead of leaving the time
    /// to the store's own clock.
    timed_requests: bool,
    /// Claim the next batch while the current one runs (the option, or the store's say).
    claim_ahead: AheadPolicy,
    /// Whether the last batch's emissions were slow (see [`AheadPolicy::WhenSlow`]).
    slow_emissions: Arc<std::sync::atomic::AtomicBool>,
    /// How the emitter's route fares (route.rs).
    route: Arc<route::RouteWatch>,
    /// `options.owner`, shared with every emission without a copy.
    owner: Arc<str>,
}

/// Why claims never emitted are given back: the drain stops.
pub(crate) const STOPPING: &str = "drain shutting down";

/// Why claims never emitted are given back: the route they would go by is failing.
pub(crate) const HELD: &str = "held: the route is failing";

/// The release reason of a key run's entries left behind its entry that failed.
pub(crate) const BEHIND_FAILURE: &str = "behind an entry of its key that was not delivered";

/// When a drain claims its next batch while the current one is emitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AheadPolicy {
    /// Always (told so, or the store serves concurrent writes).
    Always,
    /// Never (told so).
    Never,
    /// On a one-writer store left to decide: while emissions are slow (a provider taking
    /// a millisecond or more), when the database is idle most of the time and the claim
    /// costs the emitter nothing, and while no other writer has held the write lock
    /// against the store lately ([`crate::OutboxStore::writers_beside`]). With fast
    /// emitters a claim ahead queues behind the batch's own completion and takes the lock
    /// as soon as that commits, so the store goes from write to write, and writers beside
    /// it, which wait for the lock between sleeps, would seldom find it free: measured on
    /// SQLite with claims ahead forced on, a host writing flat out beside the drain
    /// committed 0.001 to 0.26 transactions per entry delivered, against 0.5 to 1 without.
    /// Once such a writer has had to be waited for, the drain claims one batch at a time
    /// again until the store has gone a while without one.
    WhenSlow,
}

impl std::fmt::Debug for Drain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Drain")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Drain {
    /// A drain of `store` into `emitter`; fails if an option is out of range.
    pub fn new(
        store: Arc<dyn ClaimStore>,
        emitter: Arc<dyn Emitter>,
        options: DrainOptions,
    ) -> Result<Self> {
        options.validate()?;
        // Refuse now what every claim of every cycle would refuse later.
        let mut sample =
            crate::ClaimRequest::new(options.owner.clone(), options.batch_size, options.lease);
        sample.topic = options.topic.clone();
        sample.ordered = options.ordered;
        sample.slice = options.slice;
        store.limits().check_claim(&sample)?;
        store.capabilities().check_claim(&sample)?;
        let claim_ahead = match options.claim_ahead {
            Some(true) => AheadPolicy::Always,
            Some(false) => AheadPolicy::Never,
            None if store.capabilities().concurrent_writes => AheadPolicy::Always,
            None => AheadPolicy::WhenSlow,
        };
        Ok(Self {
            claim_ahead,
            slow_emissions: Arc::default(),
            route: Arc::default(),
            owner: Arc::from(options.owner.as_str()),
            store,
            emitter,
            options,
            clock: Arc::new(SystemClock),
            timed_requests: false,
        })
    }

    /// Computes retry times from `clock` (tests inject one; use the store's clock).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// For tests: computes retry times from `clock` *and* has the store judge every claim,
    /// renewal and completion at `clock`'s time, so a store that reads the database's clock
    /// can be driven through time like one that reads an injected clock. Production drains
    /// leave time to the store: leases judged by one clock cannot be skewed by a worker's.
    pub fn with_test_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self.timed_requests = true;
        self
    }

    /// The time to put on a store request: `None` (the store's clock) unless a test clock
    /// was given with [`Drain::with_test_clock`].
    /// Whether to claim the next batch while this one runs.
    pub(crate) fn claims_ahead_now(&self) -> bool {
        match self.claim_ahead {
            AheadPolicy::Always => true,
            AheadPolicy::Never => false,
            AheadPolicy::WhenSlow => {
                self.slow_emissions
                    .load(std::sync::atomic::Ordering::Relaxed)
                    || !self.store.writers_beside()
            }
        }
    }

    pub(crate) fn request_time(&self) -> Option<chrono::DateTime<chrono::Utc>> {
        self.timed_requests.then(|| self.clock.now())
    }

    /// The options in force.
    pub fn options(&self) -> &DrainOptions {
        &self.options
    }

    /// Runs one cycle to its end (one batch; nothing is claimed ahead).
    pub async fn run_once(&self) -> Result<DrainSummary> {
        let (_keep, stop) = watch::channel(false);
        let mut nothing_ahead = ahead::Prefetch::new(false);
        let cycle = self.cycle(&stop, &mut nothing_ahead);
        cycle
            .instrument(self.span())
            .await
            .map_err(|failed| failed.error)
    }

    /// Runs cycles until `shutdown` completes, then stops claiming, lets running emissions
    /// finish and be recorded, releases the claims it had not started, and returns what it
    /// did. Store errors are retried with backoff; they do not end the drain. A run of
    /// failures of one kind is logged once when it starts and once, with its count, when
    /// it ends; every failed cycle is counted in [`crate::metric_names::FAILED_CYCLES`].
    pub async fn run(&self, shutdown: impl Future<Output = ()> + Send) -> DrainSummary {
        self.drive::<fn() -> std::future::Ready<bool>, _>(None, shutdown)
            .await
    }

    /// Runs cycles until one finds nothing to claim and `is_done` agrees (for example:
    /// nothing pending, retry-ready or leased is left), or until `shutdown` completes.
    pub async fn run_until<F, Fut>(
        &self,
        is_done: F,
        shutdown: impl Future<Output = ()> + Send,
    ) -> DrainSummary
    where
        F: Fn() -> Fut + Send + Sync,
        Fut: Future<Output = bool> + Send,
    {
        self.drive(Some(&is_done), shutdown).await
    }

    /// Runs cycles until `shutdown` fires (or `is_done` says so), then stops gracefully.
    async fn drive<F, Fut>(
        &self,
        is_done: Option<&F>,
        shutdown: impl Future<Output = ()> + Send,
    ) -> DrainSummary
    where
        F: Fn() -> Fut + Send + Sync,
        Fut: Future<Output = bool> + Send,
    {
        let (stop_tx, stop_rx) = watch::channel(false);
        let work = self.loop_inner(stop_rx, is_done);
        tokio::pin!(work);
        // Shutdown is polled first: once it has fired, no emission may start after it,
        // however the wake-ups of the two branches happen to interleave.
        tokio::select! {
            biased;
            () = shutdown => { let _ = stop_tx.send(true); }
            summary = &mut work => return summary,
        }
        work.await
    }

    async fn loop_inner<F, Fut>(
        &self,
        mut stop: watch::Receiver<bool>,
        is_done: Option<&F>,
    ) -> DrainSummary
    where
        F: Fn() -> Fut + Send + Sync,
        Fut: Future<Output = bool> + Send,
    {
        let mut total = DrainSummary::default();
        let mut idle = self.options.poll_interval;
        let wake = self.store.wake_signal();
        let mut ahead = ahead::Prefetch::new(true);
        let mut failures = failures::FailedCycles::default();
        let owner = self.options.owner.as_str();
        // Timed by the runtime's clock, not the drain's (a test's injected clock may
        // never move).
        let mut schema_checked = tokio::time::Instant::now();
        while !*stop.borrow() {
            if schema_checked.elapsed() >= self.options.schema_check_interval {
                match self.store.check_schema().await {
                    Err(e) if e.is_schema_refusal() => {
                        tracing::error!(
                            owner,
                            error = %e,
                            "the store refused the outbox schema it checked again (migrated \
                             past this release, or reverted below it): the drain stops"
                        );
                        total.schema_refused = true;
                        break;
                    }
                    // A check that could not run says nothing of the schema: the next
                    // cycle's statements find the store's state, and the check is tried
                    // again at the next interval.
                    _ => schema_checked = tokio::time::Instant::now(),
                }
            }
            let result = self.cycle(&stop, &mut ahead).instrument(self.span()).await;
            let claims_ahead_failed = ahead.take_errors();
            total.not_applied += ahead.take_lost();
            let went_through = result.is_ok() && claims_ahead_failed.is_empty();
            let mut after = route::AfterCycle::Go;
            let found_work = match result {
                Ok(summary) => {
                    total.add(&summary);
                    after = self.route.after_cycle(
                        owner,
                        summary.emitted,
                        summary.route_failures,
                        &self.options.route,
                        self.options.route_down_limit,
                        self.clock.now(),
                    );
                    summary.claimed > 0 || !ahead.is_empty()
                }
                Err(failed) => {
                    failures.failed(owner, failed.step, &failed.error, self.clock.now());
                    total.add(&failed.done);
                    total.errors += 1;
                    !ahead.is_empty()
                }
            };
            for e in claims_ahead_failed {
                // Whatever the batch did, claiming one ahead did not go through.
                failures.failed(owner, failures::Step::Claim, &e, self.clock.now());
                total.errors += 1;
            }
            if went_through {
                failures.succeeded(owner);
            }
            match after {
                route::AfterCycle::Go => {}
                route::AfterCycle::GiveUp => {
                    total.route_gave_up = true;
                    break;
                }
                route::AfterCycle::BackOff(pause) => {
                    // Nothing got through: the batches claimed ahead would meet the same
                    // route. Another worker may take them meanwhile.
                    let released = self.release_all_ahead(&mut ahead, HELD);
                    total.add(&released.instrument(self.span()).await);
                    tokio::select! {
                        () = tokio::time::sleep(pause) => {}
                        _ = stop.changed() => {}
                    }
                    continue;
                }
            }
            if found_work {
                idle = self.options.poll_interval;
                continue;
            }
            if let Some(done) = is_done {
                // Entries this drain held for a failing route are not done with, though
                // no count shows them (deferred, not yet due).
                if !self.still_held().await && done().await {
                    break;
                }
            }
            let nap = async {
                match &wake {
                    Some(w) => {
                        w.wait(idle).await;
                    }
                    None => tokio::time::sleep(idle).await,
                }
            };
            tokio::select! {
                () = nap => {}
                _ = stop.changed() => {}
            }
            idle = (idle * 2).min(self.options.max_idle_interval);
        }
        let released = self.release_all_ahead(&mut ahead, STOPPING);
        total.add(&released.instrument(self.span()).await);
        for e in ahead.take_errors() {
            failures.failed(owner, failures::Step::Claim, &e, self.clock.now());
            total.errors += 1;
        }
        failures.stopped(owner);
        self.route
            .stopped(owner, &self.options.route, self.clock.now());
        total
    }

    /// Whether an entry this drain held for a failing route is held still; forgets those
    /// that are not (delivered since, by this worker or another, or requeued). Stops at
    /// the first one still held, so a long hold costs a read or two per idle wait. A store
    /// that cannot tell counts as yes.
    async fn still_held(&self) -> bool {
        let mut gone = Vec::new();
        let mut held = false;
        for id in self.route.held() {
            match self.store.get(id).await {
                Ok(Some(entry)) if RouteHold::of(&entry).is_some() => held = true,
                Ok(_) => gone.push(id),
                Err(_) => held = true,
            }
            if held {
                break;
            }
        }
        self.route.released(&gone);
        held
    }

    fn span(&self) -> tracing::Span {
        tracing::info_span!("outbox.drain.cycle", owner = %self.options.owner)
    }
}
