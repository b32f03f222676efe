//! Key runs (`ClaimRequest::key_run`), for stores with ordered claims: a claim in key
//! order takes a key's head and the entries right behind it while each is pending, due
//! and of the claim's topic, never more than the batch, and never while an entry of the
//! key is leased. A store whose `Capabilities::key_runs` is false takes heads alone; each
//! case says what it expects of both.

use outbox_core::{Claim, Completion, NewEntry};

use super::keyed::{claim_ordered, complete, delivered, interleaved, keyed, names};
use crate::fixtures::*;

/// An ordered claim by `owner` of up to `n` entries in runs of up to `run` at `now`.
async fn claim_runs(
    store: &DynStore,
    owner: &str,
    n: u32,
    run: u32,
    now: chrono::DateTime<chrono::Utc>,
) -> Vec<Claim> {
    store
        .claim_next(&claim_req(owner, n, now).in_key_runs(run))
        .await
        .expect("claim in key runs")
}

/// What a store takes: `runs` with key runs, `heads` without.
fn expect(store: &DynStore, runs: Vec<usize>, heads: Vec<usize>) -> Vec<usize> {
    if store.capabilities().key_runs {
        runs
    } else {
        heads
    }
}

/// a0 b1 a2 b3 c4 _5 a6, runs of two: a0 a2, b1 b3, c4 and the keyless _5. While any of
/// a's run is leased, nobody gets a6; once both are done, a6 is the next run.
pub async fn key_runs_take_consecutive_entries_of_each_key(store: DynStore) {
    let written = interleaved(&store).await;
    let first = claim_runs(&store, "w1", 10, 2, t0()).await;
    let taken = names(&written, &first);
    assert_eq!(
        taken,
        expect(&store, vec![0, 1, 2, 3, 4, 5], vec![0, 1, 4, 5])
    );
    assert!(claim_runs(&store, "w2", 10, 2, t0()).await.is_empty());
    let claim_of = |i: usize| first.iter().find(|c| c.id() == written[i].id).cloned();
    complete(&store, &claim_of(0).unwrap(), delivered(), at(1)).await;
    let after_head = claim_runs(&store, "w2", 10, 2, at(1)).await;
    if let Some(a2) = claim_of(2) {
        assert!(after_head.is_empty(), "a2 still leased: {after_head:?}");
        complete(&store, &a2, delivered(), at(2)).await;
        let next = claim_runs(&store, "w2", 10, 2, at(2)).await;
        assert_eq!(names(&written, &next), vec![6]);
    } else {
        assert_eq!(names(&written, &after_head), vec![2]);
    }
}

/// A run ends before an entry that is not due yet, and before one of another topic than
/// the claim's; the rest waits for a later claim.
pub async fn a_run_stops_at_the_first_entry_it_may_not_take(store: DynStore) {
    let entries = vec![
        keyed("x", -9),
        keyed("x", -8).not_before(at(100)),
        keyed("x", -7),
        keyed("y", -6),
        NewEntry {
            topic: "other".into(),
            ..keyed("y", -5)
        },
        keyed("y", -4),
    ];
    let written = store.enqueue_batch(entries).await.expect("enqueue");
    let by_topic = |n| claim_req("w", n, t0()).topic("t").in_key_runs(3);
    let first = store.claim_next(&by_topic(10)).await.unwrap();
    assert_eq!(names(&written, &first), vec![0, 3]);
    for claim in &first {
        complete(&store, claim, delivered(), at(1)).await;
    }
    let later = store
        .claim_next(&claim_req("w", 10, at(101)).topic("t").in_key_runs(3))
        .await
        .unwrap();
    assert_eq!(
        names(&written, &later),
        expect(&store, vec![1, 2], vec![1]),
        "y's head is of another topic: y waits for its own drain"
    );
}

/// The batch bounds a claim, runs included: a claim of 3 fills its batch from a's and b's
/// first entries (a store may fill it with each head's run in turn, or with every head
/// first), takes of each key only a prefix of its order, and leaves nothing of a key it
/// holds to the next claim.
pub async fn a_run_never_exceeds_the_batch(store: DynStore) {
    let entries = (0..5)
        .map(|i| keyed("a", i - 10))
        .chain((0..2).map(|i| keyed("b", i - 3)))
        .collect();
    let written = store.enqueue_batch(entries).await.expect("enqueue");
    let first = names(&written, &claim_runs(&store, "w1", 3, 3, t0()).await);
    let second = names(&written, &claim_runs(&store, "w2", 10, 3, t0()).await);
    if !store.capabilities().key_runs {
        assert_eq!((first, second), (vec![0, 5], vec![]));
        return;
    }
    let (a, b) = ([0, 1, 2, 3, 4], [5, 6]);
    let of_key = |taken: &[usize], key: &[usize]| -> Vec<usize> {
        taken.iter().copied().filter(|i| key.contains(i)).collect()
    };
    assert_eq!(first.len(), 3, "runs fill the batch: {first:?}");
    for key in [&a[..], &b[..]] {
        for taken in [&first, &second] {
            assert!(key.starts_with(&of_key(taken, key)), "{taken:?}");
        }
        assert!(
            of_key(&first, key).is_empty() || of_key(&second, key).is_empty(),
            "one key in two claims: {first:?} {second:?}"
        );
    }
}

/// A head back from a failure leads its key's run: retry-ready first, then the pending
/// entries behind it, in key order.
pub async fn a_retried_head_leads_its_run(store: DynStore) {
    let written = interleaved(&store).await;
    let first = claim_ordered(&store, "w", 10, t0()).await;
    for c in &first {
        let completion = if c.id() == written[0].id {
            Completion::Failed {
                error: boom(),
                next_retry: Some(at(60)),
            }
        } else {
            delivered()
        };
        complete(&store, c, completion, at(1)).await;
    }
    let retried = claim_runs(&store, "w", 10, 3, at(61)).await;
    assert_eq!(
        names(&written, &retried),
        expect(&store, vec![0, 2, 3, 6], vec![0, 3])
    );
    assert_eq!(retried[0].id(), written[0].id, "the retried head first");
    let a: Vec<_> = retried
        .iter()
        .filter(|c| c.entry.partition_key.as_deref() == Some("a"))
        .map(|c| c.entry.created_at)
        .collect();
    assert!(a.is_sorted(), "a's run in key order: {a:?}");
}
