//! Drain scenarios any claim store runs, with a scripted emitter and an injected clock.

use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use chrono::TimeDelta;
use outbox_core::drain::{Drain, DrainOptions, RetryPolicy};
use outbox_core::{Clock, EmissionStatus, EntryId, ManualClock, NewEntry, OutboxEntry};

use crate::scripted::ScriptedEmitter;
use crate::DynStore;

mod ahead;
mod liveness;
mod ordered;
mod route;

pub use ahead::*;
pub use liveness::*;
pub use ordered::*;
pub use route::*;

/// A fresh store whose clock the case controls.
pub struct DrainSubject {
    /// The store, reading time from `clock`.
    pub store: DynStore,
    /// The clock the store reads.
    pub clock: Arc<ManualClock>,
    /// Dropped when the case ends.
    pub guard: Box<dyn Any + Send>,
}

fn options(owner: &str) -> DrainOptions {
    DrainOptions::new()
        .owner(owner)
        // The scenarios' clock starts years after the database's (see `t0`), so an age
        // limit would judge every entry enqueued at the database's time as ancient.
        .max_age(None)
        .batch_size(10)
        .lease(TimeDelta::seconds(30))
        .emit_concurrency(4)
        .poll_interval(Duration::from_millis(5), Duration::from_millis(20))
        .retry(RetryPolicy {
            initial: Duration::from_secs(1),
            multiplier: 2.0,
            max: Duration::from_secs(60),
            jitter: 0.0,
        })
        .max_attempts(3)
}

fn drain(s: &DrainSubject, emitter: &ScriptedEmitter, options: DrainOptions) -> Drain {
    Drain::new(s.store.clone(), Arc::new(emitter.clone()), options)
        .expect("valid options")
        .with_test_clock(s.clock.clone())
}

async fn enqueue(s: &DrainSubject, payloads: &[&str]) -> Vec<EntryId> {
    let entries = payloads
        .iter()
        .map(|p| NewEntry::new("drain", p.as_bytes().to_vec()))
        .collect();
    s.store
        .enqueue_batch(entries)
        .await
        .unwrap()
        .iter()
        .map(|e| e.id)
        .collect()
}

async fn row(s: &DrainSubject, id: EntryId) -> OutboxEntry {
    s.store.get(id).await.unwrap().expect("row exists")
}

/// Every entry is emitted once and recorded delivered.
pub async fn delivers_every_entry(s: DrainSubject) {
    let ids = enqueue(&s, &["ok"; 5]).await;
    let emitter = ScriptedEmitter::new(s.clock.clone());
    let summary = drain(&s, &emitter, options("w")).run_once().await.unwrap();
    assert_eq!(
        (summary.claimed, summary.delivered, summary.not_applied),
        (5, 5, 0)
    );
    for id in ids {
        let r = row(&s, id).await;
        assert_eq!(r.status, EmissionStatus::Delivered);
        assert_eq!(r.claim_owner, None);
    }
    assert!(emitter.counts().values().all(|n| *n == 1));
}

/// A deferral waits for its time, then delivers.
pub async fn deferral_waits_then_delivers(s: DrainSubject) {
    let id = enqueue(&s, &["defer"]).await[0];
    let emitter = ScriptedEmitter::new(s.clock.clone());
    let d = drain(&s, &emitter, options("w"));
    assert_eq!(d.run_once().await.unwrap().deferred, 1);
    assert_eq!(row(&s, id).await.status, EmissionStatus::Deferred);
    assert_eq!(
        d.run_once().await.unwrap().claimed,
        0,
        "claimed before the deferral ended"
    );
    s.clock.advance(TimeDelta::seconds(10));
    assert_eq!(d.run_once().await.unwrap().delivered, 1);
    assert_eq!(
        row(&s, id).await.attempt_count,
        1,
        "a deferral is not a failed attempt"
    );
}

/// Retryable failures back off exponentially, then the entry is delivered.
pub async fn retries_then_delivers(s: DrainSubject) {
    let id = enqueue(&s, &["flaky"]).await[0];
    let emitter = ScriptedEmitter::new(s.clock.clone());
    let d = drain(&s, &emitter, options("w"));
    assert_eq!(d.run_once().await.unwrap().retried, 1);
    let r = row(&s, id).await;
    assert_eq!(r.status, EmissionStatus::RetryableFailure);
    assert_eq!(r.next_retry_at, Some(s.clock.now() + TimeDelta::seconds(1)));
    s.clock.advance(TimeDelta::seconds(1));
    assert_eq!(d.run_once().await.unwrap().retried, 1);
    assert_eq!(
        row(&s, id).await.next_retry_at,
        Some(s.clock.now() + TimeDelta::seconds(2))
    );
    assert_eq!(
        d.run_once().await.unwrap().claimed,
        0,
        "retried before its time"
    );
    s.clock.advance(TimeDelta::seconds(2));
    assert_eq!(d.run_once().await.unwrap().delivered, 1);
    let r = row(&s, id).await;
    assert_eq!((r.status, r.attempt_count), (EmissionStatus::Delivered, 3));
}

/// An entry that keeps failing is dead-lettered at the attempt limit.
pub async fn retries_until_dead_letter(s: DrainSubject) {
    let id = enqueue(&s, &["broken"]).await[0];
    let emitter = ScriptedEmitter::new(s.clock.clone());
    let d = drain(&s, &emitter, options("w"));
    for _ in 0..2 {
        assert_eq!(d.run_once().await.unwrap().retried, 1);
        s.clock.advance(TimeDelta::minutes(5));
    }
    assert_eq!(d.run_once().await.unwrap().dead_lettered, 1);
    let r = row(&s, id).await;
    assert_eq!(
        (r.status, r.attempt_count),
        (EmissionStatus::DeadLettered, 3)
    );
    assert_eq!(
        r.dead_letter_reason.as_deref(),
        Some("gave up after 3 attempts")
    );
    s.clock.advance(TimeDelta::hours(1));
    assert_eq!(d.run_once().await.unwrap().claimed, 0);
}

/// A permanent failure is dead-lettered at once.
pub async fn permanent_failure_dead_letters_at_once(s: DrainSubject) {
    let id = enqueue(&s, &["poison"]).await[0];
    let emitter = ScriptedEmitter::new(s.clock.clone());
    assert_eq!(
        drain(&s, &emitter, options("w"))
            .run_once()
            .await
            .unwrap()
            .dead_lettered,
        1
    );
    assert_eq!(
        row(&s, id).await.dead_letter_reason.as_deref(),
        Some("permanent failure")
    );
}

/// An emitter that panics does not lose the entry: it is retried and then delivered.
pub async fn panicking_emitter_is_retried(s: DrainSubject) {
    let id = enqueue(&s, &["panic", "ok"]).await[0];
    let emitter = ScriptedEmitter::new(s.clock.clone());
    let d = drain(&s, &emitter, options("w"));
    let first = d.run_once().await.unwrap();
    assert_eq!((first.delivered, first.retried), (1, 1));
    let r = row(&s, id).await;
    assert_eq!(
        (r.status, r.claim_owner.clone()),
        (EmissionStatus::RetryableFailure, None)
    );
    assert_eq!(r.last_error.as_deref(), Some("the emitter panicked"));
    s.clock.advance(TimeDelta::seconds(1));
    assert_eq!(d.run_once().await.unwrap().delivered, 1);
}

/// A slow emission keeps its lease through renewals: another drain cannot take it.
pub async fn slow_emission_lease_is_renewed(s: DrainSubject) {
    let id = enqueue(&s, &["gate"]).await[0];
    let emitter = ScriptedEmitter::new(s.clock.clone());
    // Renewals come every lease / 3 of real time: 200 ms here.
    let slow = drain(
        &s,
        &emitter,
        options("slow-a").lease(TimeDelta::milliseconds(600)),
    );
    let task = tokio::spawn(async move { slow.run_once().await });
    emitter.gate_started().await;
    let first_expiry = row(&s, id).await.claim_expires_at.expect("claimed");
    s.clock.advance(TimeDelta::milliseconds(400));
    // Wait (bounded) for a renewal to move the expiry.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while row(&s, id).await.claim_expires_at == Some(first_expiry) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the lease was never renewed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Past the first lease, inside the renewed one.
    s.clock.advance(TimeDelta::milliseconds(400));
    let other = drain(&s, &emitter, options("fast-b"))
        .run_once()
        .await
        .unwrap();
    assert_eq!(
        other.claimed, 0,
        "a renewed lease was taken by another drain"
    );
    emitter.open_gate(1);
    let summary = task.await.unwrap().unwrap();
    assert_eq!((summary.delivered, summary.not_applied), (1, 0));
    assert_eq!(emitter.counts()[&id], 1);
}

/// Runs a batch whose first entry's emission hangs, moves the clock past the first lease
/// once the drain has renewed it, and checks that another drain can take none of the
/// batch; with room to emit the others meanwhile, they are recorded before the hung one
/// returns.
async fn batch_keeps_its_leases(s: DrainSubject, concurrency: usize) {
    let ids = enqueue(&s, &["gate", "ok", "ok"]).await;
    let emitter = ScriptedEmitter::new(s.clock.clone());
    let slow_options = options("slow-a")
        .lease(TimeDelta::milliseconds(600))
        .emit_concurrency(concurrency);
    let slow = drain(&s, &emitter, slow_options);
    let task = tokio::spawn(async move { slow.run_once().await });
    emitter.gate_started().await;
    let first_expiry = row(&s, ids[0]).await.claim_expires_at.expect("claimed");
    s.clock.advance(TimeDelta::milliseconds(400));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while row(&s, ids[0]).await.claim_expires_at == Some(first_expiry) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the lease was never renewed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    s.clock.advance(TimeDelta::milliseconds(400));
    let other = drain(&s, &emitter, options("fast-b"))
        .run_once()
        .await
        .unwrap();
    assert_eq!(
        other.claimed, 0,
        "another drain took a claim of an unfinished batch"
    );
    if concurrency > 1 {
        delivered(
            &s,
            &ids[1..],
            "the finished emissions recorded while the hung one runs",
        )
        .await;
    }
    emitter.open_gate(1);
    let summary = task.await.unwrap().unwrap();
    assert_eq!((summary.delivered, summary.not_applied), (3, 0));
    assert!(
        emitter.counts().values().all(|n| *n == 1),
        "an entry was emitted twice"
    );
}

/// Claims waiting for their turn behind a slow emission keep their leases.
pub async fn queued_claims_keep_their_leases(s: DrainSubject) {
    batch_keeps_its_leases(s, 1).await;
}

/// Emissions that finish while another of their batch still runs are recorded at once;
/// the running one keeps its lease.
pub async fn emitted_claims_keep_their_leases_until_recorded(s: DrainSubject) {
    batch_keeps_its_leases(s, 3).await;
}

/// A lease that ran out is reclaimed by another drain; the first holder's late
/// completion is not applied and the entry is recorded once, by the second.
pub async fn expired_lease_is_reclaimed_and_late_completion_not_applied(s: DrainSubject) {
    let id = enqueue(&s, &["gate"]).await[0];
    let emitter = ScriptedEmitter::new(s.clock.clone());
    let slow = drain(&s, &emitter, options("slow-a"));
    let task = tokio::spawn(async move { slow.run_once().await });
    emitter.gate_started().await;
    s.clock.advance(TimeDelta::seconds(31));
    let rescuer = drain(&s, &emitter, options("fast-b"))
        .run_once()
        .await
        .unwrap();
    assert_eq!((rescuer.claimed, rescuer.delivered), (1, 1));
    emitter.open_gate(1);
    let late = task.await.unwrap().unwrap();
    assert_eq!((late.delivered, late.not_applied), (0, 1));
    let r = row(&s, id).await;
    assert_eq!(
        (r.status, r.claim_attempt_count),
        (EmissionStatus::Delivered, 2)
    );
    let owners: Vec<String> = emitter.emitted().into_iter().map(|e| e.owner).collect();
    assert_eq!(
        owners,
        ["slow-a", "fast-b"],
        "duplicate only after the lease expired"
    );
}

/// Delivers at once; its first emission fires the drain's shutdown from inside the
/// emission.
struct StopsOnFirst {
    stop: std::sync::Mutex<Option<tokio::sync::oneshot::Sender<()>>>,
    emitted: std::sync::atomic::AtomicUsize,
}

#[outbox_core::async_trait]
impl outbox_core::drain::Emitter for StopsOnFirst {
    async fn emit(&self, _: outbox_core::drain::Emission<'_>) -> outbox_core::drain::EmitOutcome {
        self.emitted
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if let Some(stop) = self.stop.lock().unwrap().take() {
            let _ = stop.send(());
        }
        outbox_core::drain::EmitOutcome::delivered()
    }
}

/// A shutdown that fires while an emission runs stops the next emission from starting,
/// however fast the emitter (it caught a drain that ran emissions inside the worker's
/// task and started the rest of the batch within the poll that finished the first).
pub async fn a_shutdown_fired_inside_an_emission_starts_no_other(s: DrainSubject) {
    let ids = enqueue(&s, &["ok"; 5]).await;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let emitter = Arc::new(StopsOnFirst {
        stop: std::sync::Mutex::new(Some(stop)),
        emitted: std::sync::atomic::AtomicUsize::new(0),
    });
    let d = Drain::new(
        s.store.clone(),
        emitter.clone(),
        options("stops").emit_concurrency(1),
    )
    .expect("valid options")
    .with_test_clock(s.clock.clone());
    let summary = d
        .run(async {
            let _ = stopped.await;
        })
        .await;
    assert_eq!(
        emitter.emitted.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "an emission started after the shutdown fired"
    );
    assert_eq!(
        (summary.delivered, summary.released, summary.emitted),
        (1, 4, 1)
    );
    let mut left = 0;
    for id in &ids {
        let r = row(&s, *id).await;
        left += usize::from(r.status == EmissionStatus::Pending && r.claim_owner.is_none());
    }
    assert_eq!(left, 4, "the unstarted claims were not released");
}

/// Shutdown mid-batch: the running emission finishes and is recorded, the unstarted
/// claims are released and claimable again at once.
pub async fn shutdown_mid_batch_releases_unstarted(s: DrainSubject) {
    let ids = enqueue(&s, &["gate", "ok", "ok", "ok", "ok"]).await;
    let emitter = ScriptedEmitter::new(s.clock.clone());
    let d = drain(&s, &emitter, options("slow-a").emit_concurrency(1));
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        d.run(async {
            let _ = stop_rx.await;
        })
        .await
    });
    emitter.gate_started().await;
    stop_tx.send(()).unwrap();
    emitter.open_gate(1);
    let summary = task.await.unwrap();
    assert_eq!(
        (summary.delivered, summary.released, summary.emitted),
        (1, 4, 1)
    );
    assert_eq!(row(&s, ids[0]).await.status, EmissionStatus::Delivered);
    for id in &ids[1..] {
        let r = row(&s, *id).await;
        assert_eq!(
            (r.status, r.claim_owner.clone(), r.attempt_count),
            (EmissionStatus::Pending, None, 0)
        );
    }
    let next = drain(&s, &emitter, options("w")).run_once().await.unwrap();
    assert_eq!(next.delivered, 4);
}

/// Polls `check` every 10 ms until it holds; fails the case after 10 s.
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !check().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "never happened: {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Waits (as [`eventually`]) until every entry of `ids` is recorded delivered.
async fn delivered(s: &DrainSubject, ids: &[EntryId], what: &str) {
    eventually(what, || async {
        for id in ids {
            if row(s, *id).await.status != EmissionStatus::Delivered {
                return false;
            }
        }
        true
    })
    .await;
}

/// Runs `d` until the returned sender fires (or is dropped).
fn run_until_stopped(
    d: Drain,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<outbox_core::drain::DrainSummary>,
) {
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        d.run(async {
            let _ = stop_rx.await;
        })
        .await
    });
    (stop_tx, task)
}

/// The non-claiming compatibility path delivers through stamp-checked saves.
pub async fn compatibility_path_without_leases(s: DrainSubject) {
    let ids = enqueue(&s, &["ok", "flaky"]).await;
    let emitter = ScriptedEmitter::new(s.clock.clone());
    let d = drain(&s, &emitter, options("single").use_claim_leases(false));
    let first = d.run_once().await.unwrap();
    assert_eq!((first.delivered, first.retried), (1, 1));
    let r = row(&s, ids[0]).await;
    assert_eq!(
        (r.status, r.claim_attempt_count),
        (EmissionStatus::Delivered, 0),
        "no lease was taken"
    );
    assert_eq!(
        row(&s, ids[1]).await.status,
        EmissionStatus::RetryableFailure
    );
}

/// Options out of range are refused before anything runs.
pub async fn bad_options_are_refused(s: DrainSubject) {
    let emitter = Arc::new(ScriptedEmitter::new(s.clock.clone()));
    let bad = [
        options("w").batch_size(0),
        options("w").batch_size(s.store.limits().max_batch_size + 1),
        options("").batch_size(1),
        options("w").lease(TimeDelta::zero()),
        options("w").emit_concurrency(0),
        options("w").max_attempts(0),
        options("w").poll_interval(Duration::ZERO, Duration::ZERO),
        options("w").lease(TimeDelta::days(400)),
        options(&"w".repeat(300)),
        options("w").emit_timeout(Duration::ZERO),
        options("w").emit_timeout(Duration::from_secs(2 * 86_400)),
        options("w").shutdown_grace(Duration::from_secs(2 * 86_400)),
        options("w").max_age(Some(Duration::ZERO)),
        options("w").ordered(true).use_claim_leases(false),
        options("w").batches_ahead(0),
        options("w").batches_ahead(9),
    ];
    for o in bad {
        let err = Drain::new(s.store.clone(), emitter.clone(), o.clone()).unwrap_err();
        assert!(err.is_invalid_input(), "{o:?}: {err}");
    }
    // Per-key order where the store has it; refused up front where it does not.
    let ordered = Drain::new(s.store.clone(), emitter.clone(), options("w").ordered(true));
    if s.store.capabilities().ordered_claims {
        ordered.expect("an ordered drain on a store with ordered claims");
    } else {
        let Err(err) = ordered else {
            panic!("an ordered drain on a store without ordered claims was built");
        };
        assert!(
            matches!(err, outbox_core::OutboxError::Unsupported(_)),
            "{err}"
        );
    }
}

/// Stamps out one `#[tokio::test]` per drain scenario; `$factory` is an async fn returning
/// an `Option<DrainSubject>` (`None` when the engine is unreachable, already reported).
#[doc(hidden)]
#[macro_export]
macro_rules! drain_suite {
    ($factory:expr) => {
        $crate::__drain_cases!($factory; delivers_every_entry, deferral_waits_then_delivers,
            retries_then_delivers, retries_until_dead_letter, permanent_failure_dead_letters_at_once,
            panicking_emitter_is_retried, slow_emission_lease_is_renewed,
            queued_claims_keep_their_leases, emitted_claims_keep_their_leases_until_recorded,
            expired_lease_is_reclaimed_and_late_completion_not_applied,
            shutdown_mid_batch_releases_unstarted, a_shutdown_fired_inside_an_emission_starts_no_other,
            claims_ahead_are_held_then_released_at_shutdown,
            two_batches_ahead_are_held_then_released_at_shutdown, claims_ahead_keep_their_leases, a_claim_ahead_that_was_lost_is_never_emitted,
            compatibility_path_without_leases, bad_options_are_refused,
            a_hung_emission_times_out_and_is_retried, a_graceful_stop_is_bounded_by_its_grace_period,
            an_entry_deferred_forever_is_dead_lettered_past_its_max_age,
            the_batch_claimed_ahead_is_emitted_before_the_running_one_ends,
            a_failing_route_holds_entries_and_delivers_them_when_it_returns,
            an_entry_refusal_still_dead_letters_beside_a_route_hold,
            a_drain_gives_up_on_a_route_down_past_its_limit,
            one_missing_destination_among_healthy_ones_is_held_on_its_own);
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __drain_cases {
    ($factory:expr; $($case:ident),+ $(,)?) => {
        mod drain_cases {
            #[allow(unused_imports)]
            use super::*;
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let Some(subject) = ($factory)().await else { return };
                    $crate::drain_cases::$case(subject).await;
                }
            )+
        }
    };
}
