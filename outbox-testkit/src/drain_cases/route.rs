//! A failing route: its entries are held, not failed, and delivered once it carries again.

use std::sync::Arc;
use std::time::Duration;

use chrono::TimeDelta;
use outbox_core::drain::{DrainOptions, RetryPolicy};
use outbox_core::{Clock, EmissionStatus, EntryId, ManualClock, NewEntry};

use super::{drain, enqueue, options, row, DrainSubject};
use crate::scripted::ScriptedEmitter;

/// A quick route backoff, so the cases run in real milliseconds.
fn quick(options: DrainOptions) -> DrainOptions {
    options.route_backoff(RetryPolicy {
        initial: Duration::from_millis(5),
        multiplier: 2.0,
        max: Duration::from_millis(20),
        jitter: 0.0,
    })
}

/// Moves `clock` on in steps while the case runs, so held entries come due.
fn keep_time_moving(clock: Arc<ManualClock>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_millis(2)).await;
            clock.advance(TimeDelta::milliseconds(50));
        }
    })
}

/// Runs `d` with time moving until it gives up on a route (its limit), and what it did.
async fn run_until_it_gives_up(
    s: &DrainSubject,
    d: outbox_core::drain::Drain,
) -> outbox_core::drain::DrainSummary {
    let ticking = keep_time_moving(s.clock.clone());
    let summary =
        tokio::time::timeout(Duration::from_secs(60), d.run(std::future::pending::<()>()))
            .await
            .expect("the drain gives up on the route");
    ticking.abort();
    assert!(summary.route_gave_up, "{summary:?}");
    summary
}

/// Whether the store has nothing pending or retry-ready to find (as `--until-empty` asks):
/// entries held for the route, deferred and not yet due, are neither.
async fn drained(store: crate::DynStore) -> bool {
    let req = outbox_core::FindRequest::new(1);
    matches!(
        (store.find_pending(&req).await, store.find_retry_ready(&req).await),
        (Ok(pending), Ok(retry)) if pending.is_empty() && retry.is_empty()
    )
}

/// A route that fails holds what was emitted there (deferred, no attempt counted, past its
/// max age too), releases the rest of the batch, probes one emission at a time, and
/// dead-letters nothing; once it carries again a drain running until the outbox looks
/// empty still waits for the entries it held, and delivers each once.
pub async fn a_failing_route_holds_entries_and_delivers_them_when_it_returns(s: DrainSubject) {
    let ids = enqueue(&s, &["ok"; 20]).await;
    let emitter = ScriptedEmitter::new(s.clock.clone());
    emitter.route_down(true);
    // Every entry is older than the max age: a route failure does not age them out.
    s.clock.advance(TimeDelta::hours(2));
    let d = drain(
        &s,
        &emitter,
        quick(options("w")).max_age(Some(Duration::from_secs(60))),
    );
    let first = d.run_once().await.unwrap();
    assert_eq!(first.dead_lettered, 0, "{first:?}");
    assert!(
        (1..=4).contains(&first.route_failures),
        "no more than the emissions in flight when the route first failed: {first:?}"
    );
    assert_eq!(first.deferred, first.route_failures, "{first:?}");
    let mut held = 0;
    for id in &ids {
        let r = row(&s, *id).await;
        assert_eq!(r.attempt_count, 0, "a route failure is not an attempt");
        assert_eq!(r.claim_owner, None, "nothing is left leased");
        match r.status {
            EmissionStatus::Deferred => {
                held += 1;
                let why = r.last_error.unwrap_or_default();
                assert!(
                    why.starts_with("route missing (scripted destination): "),
                    "{why}"
                );
            }
            EmissionStatus::Pending => {}
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(held, first.route_failures);
    let probe = d.run_once().await.unwrap();
    assert_eq!(
        (probe.emitted, probe.route_failures, probe.dead_lettered),
        (1, 1, 0),
        "a failing route is probed one emission at a time: {probe:?}"
    );
    emitter.route_down(false);
    let ticking = keep_time_moving(s.clock.clone());
    let summary = tokio::time::timeout(
        Duration::from_secs(60),
        d.run_until(|| drained(s.store.clone()), std::future::pending::<()>()),
    )
    .await
    .expect("the drain ends once every entry is delivered");
    ticking.abort();
    assert_eq!(
        (summary.dead_lettered, summary.delivered),
        (0, 20),
        "{summary:?}"
    );
    for id in &ids {
        let r = row(&s, *id).await;
        assert_eq!((r.status, r.attempt_count), (EmissionStatus::Delivered, 1));
    }
    let counts = emitter.counts();
    assert!(counts.values().all(|n| *n <= 2), "{counts:?}");
    let twice = counts.values().filter(|n| **n == 2).count() as u64;
    assert_eq!(
        twice,
        held + 1,
        "emitted again: the entries held and the probe, no other"
    );
}

/// An entry's own refusal is still the entry's while a route is fine: dead-lettered.
pub async fn an_entry_refusal_still_dead_letters_beside_a_route_hold(s: DrainSubject) {
    let poison = enqueue(&s, &["poison"]).await[0];
    let emitter = ScriptedEmitter::new(s.clock.clone());
    emitter.route_down(true);
    let d = drain(&s, &emitter, quick(options("w")));
    assert_eq!(d.run_once().await.unwrap().route_failures, 1);
    assert_eq!(row(&s, poison).await.status, EmissionStatus::Deferred);
    emitter.route_down(false);
    s.clock.advance(TimeDelta::seconds(1));
    assert_eq!(d.run_once().await.unwrap().dead_lettered, 1);
    let r = row(&s, poison).await;
    assert_eq!(
        (r.status, r.attempt_count),
        (EmissionStatus::DeadLettered, 1)
    );
}

/// With a limit, a drain whose route stays down stops and says so; its entries stay
/// held, no attempt counted, for the next drain.
pub async fn a_drain_gives_up_on_a_route_down_past_its_limit(s: DrainSubject) {
    let ids = enqueue(&s, &["ok"; 5]).await;
    let emitter = ScriptedEmitter::new(s.clock.clone());
    emitter.route_down(true);
    let options = quick(options("w")).route_down_limit(Some(Duration::from_secs(2)));
    let summary = run_until_it_gives_up(&s, drain(&s, &emitter, options)).await;
    assert_eq!(summary.dead_lettered, 0, "{summary:?}");
    for id in ids {
        let r = row(&s, id).await;
        assert!(
            matches!(r.status, EmissionStatus::Deferred | EmissionStatus::Pending),
            "{r:?}"
        );
        assert_eq!((r.attempt_count, r.claim_owner), (0, None));
    }
}

/// One destination missing among healthy ones: the healthy entries are all delivered, the
/// missing one's held (never dead-lettered, no attempt counted), and the drain's limit
/// counts its streak while the others carry: deliveries elsewhere do not start it again
/// (route.rs's tests show its holds growing across the healthy cycles).
pub async fn one_missing_destination_among_healthy_ones_is_held_on_its_own(s: DrainSubject) {
    let mut payloads = vec!["ok"; 40];
    payloads[3] = "missing";
    let ids = enqueue(&s, &payloads).await;
    let emitter = ScriptedEmitter::new(s.clock.clone());
    let options = quick(options("w")).route_down_limit(Some(Duration::from_secs(5)));
    let d = drain(&s, &emitter, options);
    let running = tokio::spawn(async move { d.run(std::future::pending::<()>()).await });
    // The clock stands still until the healthy entries are delivered, however slowly the
    // machine runs. Then it jumps past the route's limit once, and stands still again.
    // The streak began with the missing entry's first failure, before the others were
    // delivered, so the next probe that fails ends the drain. Were a delivery elsewhere
    // to start the streak again, the drain would wait for time that never comes, and the
    // case would fail by its timeout.
    let healthy: Vec<EntryId> = ids
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 3)
        .map(|(_, id)| *id)
        .collect();
    super::delivered(
        &s,
        &healthy,
        "the healthy entries delivered beside the held one",
    )
    .await;
    s.clock.advance(TimeDelta::seconds(6));
    let summary = tokio::time::timeout(Duration::from_secs(60), running)
        .await
        .expect("the drain gives up on the route without the clock moving again")
        .expect("the drain ran");
    assert!(summary.route_gave_up, "{summary:?}");
    assert_eq!(
        (summary.delivered, summary.dead_lettered),
        (39, 0),
        "{summary:?}"
    );
    let missing = row(&s, ids[3]).await;
    assert_eq!(
        (missing.status, missing.attempt_count),
        (EmissionStatus::Deferred, 0)
    );
    assert_eq!(
        summary.route_failures,
        emitter.counts()[&ids[3]] as u64,
        "only the missing one met a failing route"
    );
}

/// Ordered drains, two workers: while the route is down and after, every key's entries
/// are emitted in their order (a later one never before an earlier one has gone), and
/// each is delivered once.
pub async fn ordered_keys_keep_their_order_across_a_route_hold(s: DrainSubject) {
    let keys = ["a", "b", "c"];
    let first = s.clock.now() - TimeDelta::seconds(1);
    let batch: Vec<NewEntry> = (0..30)
        .map(|i| {
            NewEntry::new("drain", b"ok".to_vec())
                .partition_key(keys[i % 3])
                .created_at(first + TimeDelta::milliseconds(i as i64))
        })
        .collect();
    let ids: Vec<EntryId> = s
        .store
        .enqueue_batch(batch)
        .await
        .unwrap()
        .iter()
        .map(|e| e.id)
        .collect();
    let emitter = ScriptedEmitter::new(s.clock.clone());
    emitter.route_down(true);
    let workers: Vec<_> = ["w1", "w2"]
        .into_iter()
        .map(|w| drain(&s, &emitter, quick(options(w)).ordered(true)))
        .collect();
    let ticking = keep_time_moving(s.clock.clone());
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let running: Vec<_> = workers
        .into_iter()
        .map(|d| {
            let mut stop = stop_rx.clone();
            tokio::spawn(async move {
                d.run(async move {
                    let _ = stop.wait_for(|s| *s).await;
                })
                .await
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let failed_while_down = emitter.emitted().len();
    assert!(
        failed_while_down >= 3,
        "the route was tried: {failed_while_down}"
    );
    emitter.route_down(false);
    let all_delivered = async {
        loop {
            let mut n = 0;
            for id in &ids {
                if row(&s, *id).await.status == EmissionStatus::Delivered {
                    n += 1;
                }
            }
            if n == ids.len() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(60), all_delivered)
        .await
        .expect("every entry delivered once the route is back");
    let _ = stop_tx.send(true);
    let mut total = outbox_core::drain::DrainSummary::default();
    for r in running {
        total.add(&r.await.unwrap());
    }
    ticking.abort();
    assert_eq!((total.dead_lettered, total.delivered), (0, 30), "{total:?}");
    assert!(total.route_failures >= 1, "{total:?}");
    for (k, key) in keys.iter().enumerate() {
        let of_key: Vec<EntryId> = ids.iter().skip(k).step_by(3).copied().collect();
        let order: Vec<usize> = emitter
            .emitted()
            .iter()
            .filter_map(|e| of_key.iter().position(|id| *id == e.id))
            .collect();
        assert!(
            order.windows(2).all(|w| w[0] <= w[1]),
            "key {key}: emitted out of order: {order:?}"
        );
    }
}
