//! Drain scenarios about liveness and flow: a hung emission, a bounded stop, an entry
//! deferred forever, and emissions kept in flight across batches.

use std::time::Duration;

use chrono::TimeDelta;
use outbox_core::{Clock, EmissionStatus, NewEntry};

use super::{delivered, drain, enqueue, options, row, run_until_stopped, DrainSubject};
use crate::scripted::ScriptedEmitter;

/// An emission that never returns is abandoned at the emit timeout and recorded as a
/// retryable failure; the rest of its batch is delivered meanwhile, and the batch ends.
pub async fn a_hung_emission_times_out_and_is_retried(s: DrainSubject) {
    let ids = enqueue(&s, &["hang", "ok", "ok"]).await;
    let emitter = ScriptedEmitter::new(s.clock.clone());
    let d = drain(
        &s,
        &emitter,
        options("w").emit_timeout(Duration::from_millis(200)),
    );
    let summary = tokio::time::timeout(Duration::from_secs(20), d.run_once())
        .await
        .expect("the batch ended despite the hung emission")
        .unwrap();
    assert_eq!((summary.delivered, summary.retried), (2, 1), "{summary:?}");
    let hung = row(&s, ids[0]).await;
    assert_eq!(hung.status, EmissionStatus::RetryableFailure);
    assert_eq!(hung.attempt_count, 1);
    assert!(
        hung.last_error
            .as_deref()
            .unwrap_or("")
            .contains("did not finish within"),
        "{hung:?}"
    );
    assert!(
        hung.claim_owner.is_none(),
        "the timed-out claim is still held"
    );
    for id in &ids[1..] {
        assert_eq!(row(&s, *id).await.status, EmissionStatus::Delivered);
    }
}

/// A graceful stop waits for running emissions only as long as the grace period: a hung
/// one is then abandoned and its claim released, claimable again at once.
pub async fn a_graceful_stop_is_bounded_by_its_grace_period(s: DrainSubject) {
    let ids = enqueue(&s, &["hang", "ok"]).await;
    let emitter = ScriptedEmitter::new(s.clock.clone());
    let d = drain(
        &s,
        &emitter,
        options("w")
            .emit_timeout(Duration::from_secs(3600))
            .shutdown_grace(Duration::from_millis(200)),
    );
    let (stop_tx, task) = run_until_stopped(d);
    emitter.gate_started().await;
    delivered(&s, &ids[1..], "the other emission recorded").await;
    stop_tx.send(()).unwrap();
    let summary = tokio::time::timeout(Duration::from_secs(20), task)
        .await
        .expect("the stop waited past its grace period")
        .unwrap();
    assert_eq!((summary.delivered, summary.released), (1, 1), "{summary:?}");
    let hung = row(&s, ids[0]).await;
    assert_eq!(hung.status, EmissionStatus::Pending);
    assert_eq!(hung.attempt_count, 0, "a release counts no attempt");
    assert!(
        hung.claim_owner.is_none(),
        "the abandoned claim was not released"
    );
}

/// An entry a provider keeps deferring is dead-lettered once it is older than the drain's
/// max age, instead of cycling forever (deferrals count no attempts).
pub async fn an_entry_deferred_forever_is_dead_lettered_past_its_max_age(s: DrainSubject) {
    let created = s.clock.now();
    let id = s
        .store
        .enqueue(NewEntry::new("drain", b"always-defer".to_vec()).created_at(created))
        .await
        .unwrap()
        .id;
    let emitter = ScriptedEmitter::new(s.clock.clone());
    let d = drain(
        &s,
        &emitter,
        options("w").max_age(Some(Duration::from_secs(60))),
    );
    assert_eq!(d.run_once().await.unwrap().deferred, 1);
    s.clock.advance(TimeDelta::seconds(10));
    assert_eq!(
        d.run_once().await.unwrap().deferred,
        1,
        "young enough to defer again"
    );
    s.clock.advance(TimeDelta::seconds(55));
    let summary = d.run_once().await.unwrap();
    assert_eq!(
        (summary.deferred, summary.dead_lettered),
        (0, 1),
        "{summary:?}"
    );
    let r = row(&s, id).await;
    assert_eq!(r.status, EmissionStatus::DeadLettered);
    assert!(
        r.dead_letter_reason
            .as_deref()
            .unwrap_or("")
            .contains("max age"),
        "{r:?}"
    );
}

/// A batch claimed ahead is taken in when the running batch has nothing left to start, so
/// emissions stay in flight across batches: here the next batch is delivered while the
/// first still waits on a slow emission.
pub async fn the_batch_claimed_ahead_is_emitted_before_the_running_one_ends(s: DrainSubject) {
    let ids = enqueue(&s, &["gate", "ok", "ok", "ok"]).await;
    let emitter = ScriptedEmitter::new(s.clock.clone());
    let d = drain(
        &s,
        &emitter,
        options("slow-a")
            .batch_size(2)
            .emit_concurrency(4)
            .claim_ahead(true),
    );
    let (stop_tx, task) = run_until_stopped(d);
    emitter.gate_started().await;
    delivered(
        &s,
        &ids[1..],
        "the batch claimed ahead delivered while the running one waits on a slow emission",
    )
    .await;
    emitter.open_gate(1);
    delivered(&s, &ids[..1], "the slow emission recorded").await;
    stop_tx.send(()).unwrap();
    let summary = task.await.unwrap();
    assert_eq!(summary.delivered, 4, "{summary:?}");
    assert!(
        emitter.counts().values().all(|n| *n == 1),
        "an entry was emitted twice"
    );
}
