//! Ordered drains, for stores with keyed claims: a key's head that fails holds the key
//! back (retried in place), or is dead-lettered so the key moves on, as the drain says.

use chrono::TimeDelta;
use outbox_core::drain::HeadFailure;
use outbox_core::{Clock, EmissionStatus, EntryId, NewEntry};

use super::{drain, options, row, DrainSubject};
use crate::scripted::ScriptedEmitter;

/// Enqueues `(key, payload)` entries, each created a millisecond after the one before.
async fn enqueue_keyed(s: &DrainSubject, entries: &[(&str, &str)]) -> Vec<EntryId> {
    let n = i64::try_from(entries.len()).expect("few entries");
    let first = s.clock.now() - TimeDelta::milliseconds(n);
    let batch = entries
        .iter()
        .zip(0..)
        .map(|((key, payload), i)| {
            NewEntry::new("drain", payload.as_bytes().to_vec())
                .partition_key(*key)
                .created_at(first + TimeDelta::milliseconds(i))
        })
        .collect();
    let written = s.store.enqueue_batch(batch).await.unwrap();
    written.iter().map(|e| e.id).collect()
}

/// The order in which `ids` were emitted (repeats in a row counted once), ignoring the
/// other entries.
fn emission_order(emitter: &ScriptedEmitter, ids: &[EntryId]) -> Vec<usize> {
    let mut order = Vec::new();
    for e in emitter.emitted() {
        let Some(at) = ids.iter().position(|id| *id == e.id) else {
            continue;
        };
        if order.last() != Some(&at) {
            order.push(at);
        }
    }
    order
}

/// Blocking (the default): a head that fails is retried on its schedule while the rest
/// of its key waits; other keys go on; the key's entries come out in order.
pub async fn an_ordered_drain_holds_a_key_behind_its_failing_head(s: DrainSubject) {
    let ids = enqueue_keyed(&s, &[("a", "flaky"), ("b", "ok"), ("a", "ok"), ("b", "ok")]).await;
    let emitter = ScriptedEmitter::new(s.clock.clone());
    // Heads alone: one entry of a key per claim (runs: the next case).
    let d = drain(&s, &emitter, options("w").ordered(true).key_run(1));
    let first = d.run_once().await.unwrap();
    assert_eq!((first.retried, first.delivered), (1, 1), "{first:?}");
    let second = d.run_once().await.unwrap();
    assert_eq!(
        (second.claimed, second.delivered),
        (1, 1),
        "only b's second: {second:?}"
    );
    assert_eq!(
        row(&s, ids[2]).await.status,
        EmissionStatus::Pending,
        "a's second waits"
    );
    s.clock.advance(TimeDelta::seconds(1));
    assert_eq!(d.run_once().await.unwrap().retried, 1, "the head again");
    s.clock.advance(TimeDelta::seconds(2));
    assert_eq!(
        d.run_once().await.unwrap().delivered,
        1,
        "the head, third attempt"
    );
    assert_eq!(d.run_once().await.unwrap().delivered, 1, "then a's second");
    let a: Vec<EntryId> = vec![ids[0], ids[2]];
    assert_eq!(emission_order(&emitter, &a), vec![0, 1]);
    assert_eq!(row(&s, ids[2]).await.status, EmissionStatus::Delivered);
}

/// Key runs: one claim takes each key's consecutive entries; the drain emits a key's run
/// one entry after the other, and at the first failure releases the rest of the run
/// unemitted and unattempted, so they wait behind the failed entry; other keys' runs are
/// delivered whole. A store without runs takes heads alone, in the same order.
pub async fn an_ordered_drain_emits_key_runs_in_order_and_stops_one_at_a_failure(s: DrainSubject) {
    let entries = [
        ("a", "ok"),
        ("b", "ok"),
        ("a", "ok"),
        ("b", "ok"),
        ("a", "flaky"),
        ("b", "ok"),
        ("a", "ok"),
    ];
    let ids = enqueue_keyed(&s, &entries).await;
    let (a, b) = ([ids[0], ids[2], ids[4], ids[6]], [ids[1], ids[3], ids[5]]);
    let emitter = ScriptedEmitter::new(s.clock.clone());
    let d = drain(&s, &emitter, options("w").ordered(true).key_run(10));
    let first = d.run_once().await.unwrap();
    if s.store.capabilities().key_runs {
        assert_eq!(
            (
                first.claimed,
                first.delivered,
                first.retried,
                first.released
            ),
            (7, 5, 1, 1),
            "{first:?}"
        );
        assert_eq!(
            emission_order(&emitter, &a),
            vec![0, 1, 2],
            "a3 never emitted"
        );
        assert_eq!(emission_order(&emitter, &b), vec![0, 1, 2]);
        let behind = row(&s, a[3]).await;
        assert_eq!(
            (behind.status, behind.attempt_count, behind.claim_token),
            (EmissionStatus::Pending, 0, None),
            "released untouched: {behind:?}"
        );
        let next = d.run_once().await.unwrap();
        assert_eq!(next.claimed, 0, "a waits behind its failed entry: {next:?}");
    } else {
        assert_eq!((first.claimed, first.delivered), (2, 2), "heads: {first:?}");
    }
    for _ in 0..20 {
        s.clock.advance(TimeDelta::seconds(5));
        d.run_once().await.unwrap();
    }
    for id in ids {
        assert_eq!(row(&s, id).await.status, EmissionStatus::Delivered);
    }
    assert_eq!(emission_order(&emitter, &a), vec![0, 1, 2, 3]);
    assert_eq!(emission_order(&emitter, &b), vec![0, 1, 2]);
}

/// `HeadFailure::DeadLetter`: a head that fails is dead-lettered at once and its key
/// moves on.
pub async fn an_ordered_drain_can_dead_letter_a_failing_head_and_move_on(s: DrainSubject) {
    let ids = enqueue_keyed(&s, &[("a", "flaky"), ("a", "ok"), ("b", "ok")]).await;
    let emitter = ScriptedEmitter::new(s.clock.clone());
    let options = options("w")
        .ordered(true)
        .head_failure(HeadFailure::DeadLetter);
    let d = drain(&s, &emitter, options);
    let first = d.run_once().await.unwrap();
    assert_eq!((first.dead_lettered, first.delivered), (1, 1), "{first:?}");
    let head = row(&s, ids[0]).await;
    assert_eq!(head.status, EmissionStatus::DeadLettered);
    assert!(
        head.dead_letter_reason
            .as_deref()
            .unwrap_or_default()
            .contains("later entries of its key"),
        "{head:?}"
    );
    assert_eq!(
        d.run_once().await.unwrap().delivered,
        1,
        "a's second, at once"
    );
    assert_eq!(row(&s, ids[1]).await.status, EmissionStatus::Delivered);
}

/// Drains without claim leases, one per slice: each delivers only its slice's entries,
/// and together they deliver every entry once.
pub async fn unleased_drains_over_slices_deliver_each_entry_once(s: DrainSubject) {
    let keys = ["a", "b", "c", "d", "e", "f", "g", "h"];
    let entries: Vec<(&str, &str)> = keys.iter().flat_map(|k| [(*k, "ok"), (*k, "ok")]).collect();
    let ids = enqueue_keyed(&s, &entries).await;
    let emitter = ScriptedEmitter::new(s.clock.clone());
    let count = 3;
    let mut delivered = 0;
    for index in 0..count {
        let slice = outbox_core::Slice::new(index, count).expect("a slice");
        let o = options(&format!("slice-{index}"))
            .use_claim_leases(false)
            .slice(slice);
        let before = emitter.emitted().len();
        delivered += drain(&s, &emitter, o).run_once().await.unwrap().delivered;
        for e in &emitter.emitted()[before..] {
            let key = row(&s, e.id).await.partition_key;
            assert!(
                slice.contains(key.as_deref(), e.id),
                "{slice} delivered {key:?}"
            );
        }
    }
    assert_eq!(delivered, ids.len() as u64, "every entry, once");
    for id in ids {
        assert_eq!(row(&s, id).await.status, EmissionStatus::Delivered);
    }
}

/// Stamps out the ordered drain cases; on a store without ordered claims
/// (`Capabilities::ordered_claims`) or slices, each checks instead that the store refuses
/// what the case needs. `$factory` as for [`crate::drain_suite!`]. A part of
/// [`crate::store_suite!`].
#[doc(hidden)]
#[macro_export]
macro_rules! keyed_drain_suite {
    ($factory:expr) => {
        $crate::__keyed_drain_cases!($factory;
            an_ordered_drain_holds_a_key_behind_its_failing_head: ordered_claims,
            an_ordered_drain_emits_key_runs_in_order_and_stops_one_at_a_failure: ordered_claims,
            an_ordered_drain_can_dead_letter_a_failing_head_and_move_on: ordered_claims,
            ordered_keys_keep_their_order_across_a_route_hold: ordered_claims,
            unleased_drains_over_slices_deliver_each_entry_once: slice_claims
        );
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __keyed_drain_cases {
    ($factory:expr; $($case:ident : $capability:ident),+ $(,)?) => {
        mod keyed_drain_cases {
            #[allow(unused_imports)]
            use super::*;
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let Some(subject) = ($factory)().await else {
                        return;
                    };
                    $crate::suite::capability::run_or_refused(
                        subject.store.clone(),
                        |c| c.$capability,
                        stringify!($capability),
                        stringify!($case),
                        $crate::drain_cases::$case(subject),
                    )
                    .await;
                }
            )+
        }
    };
}
