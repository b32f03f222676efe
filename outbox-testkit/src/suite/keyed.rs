//! Per-key order and slices, for stores whose capabilities say they have them
//! (`Capabilities::ordered_claims`, `slice_claims`): of the entries sharing a partition key only the oldest
//! one not yet terminal is claimable, and only while no entry of its key is leased; a
//! slice claim takes exactly the entries whose slice hash falls in it.

use std::collections::{HashMap, HashSet};

use outbox_core::{
    Claim, ClaimRequest, Completion, CompletionRequest, EmissionStatus, EntryId, FindRequest,
    NewEntry, OutboxEntry, Slice,
};

use crate::fixtures::*;

/// An entry of key `key` (none for `""`) created at `at(created_secs)`.
pub(crate) fn keyed(key: &str, created_secs: i64) -> NewEntry {
    let entry = new_entry(created_secs);
    if key.is_empty() {
        entry
    } else {
        entry.partition_key(key)
    }
}

/// An ordered claim by `owner` of up to `n` entries at `now`, retry-ready ones first.
pub(crate) async fn claim_ordered(
    store: &DynStore,
    owner: &str,
    n: u32,
    now: chrono::DateTime<chrono::Utc>,
) -> Vec<Claim> {
    store
        .claim_next(&claim_req(owner, n, now).in_key_order())
        .await
        .expect("ordered claim")
}

/// The ids of `written` named by their position, for readable assertions.
pub(crate) fn names(written: &[OutboxEntry], claims: &[Claim]) -> Vec<usize> {
    let mut named: Vec<usize> = claims
        .iter()
        .map(|c| {
            written
                .iter()
                .position(|e| e.id == c.id())
                .expect("a written entry")
        })
        .collect();
    named.sort_unstable();
    named
}

pub(crate) async fn complete(
    store: &DynStore,
    claim: &Claim,
    completion: Completion,
    now: chrono::DateTime<chrono::Utc>,
) {
    let done = store
        .complete_batch(vec![
            CompletionRequest::new(claim.clone(), completion).at(now)
        ])
        .await
        .expect("complete");
    assert!(done[0].is_applied(), "{:?}", done[0]);
}

pub(crate) fn delivered() -> Completion {
    Completion::Delivered(Default::default())
}

/// a0 b1 a2 b3 c4 _5 a6 (key, then creation second; `_` has no key).
pub(crate) async fn interleaved(store: &DynStore) -> Vec<OutboxEntry> {
    let entries = [
        ("a", -7),
        ("b", -6),
        ("a", -5),
        ("b", -4),
        ("c", -3),
        ("", -2),
        ("a", -1),
    ]
    .into_iter()
    .map(|(k, t)| keyed(k, t))
    .collect();
    store.enqueue_batch(entries).await.expect("enqueue")
}

/// One entry per key, its oldest, and every entry without a key; a key with a leased
/// entry gives nothing more, to this worker or another; completing the head frees the
/// next one.
pub async fn ordered_claims_take_the_head_of_each_key(store: DynStore) {
    let written = interleaved(&store).await;
    let first = claim_ordered(&store, "w1", 10, t0()).await;
    assert_eq!(names(&written, &first), vec![0, 1, 4, 5]);
    assert!(claim_ordered(&store, "w2", 10, t0()).await.is_empty());
    let a0 = first.iter().find(|c| c.id() == written[0].id).unwrap();
    complete(&store, a0, delivered(), at(1)).await;
    let next = claim_ordered(&store, "w2", 10, at(1)).await;
    assert_eq!(names(&written, &next), vec![2]);
}

/// A head that failed and waits for its retry holds its key back until it is delivered;
/// other keys go on meanwhile.
pub async fn a_retry_holds_back_the_later_entries_of_its_key(store: DynStore) {
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
    let before_retry = claim_ordered(&store, "w", 10, at(30)).await;
    assert_eq!(
        names(&written, &before_retry),
        vec![3],
        "only b3: a2 waits behind a0"
    );
    complete(&store, &before_retry[0], delivered(), at(31)).await;
    let retried = claim_ordered(&store, "w", 10, at(61)).await;
    assert_eq!(
        names(&written, &retried),
        vec![0],
        "a0 again, still ahead of a2"
    );
    complete(&store, &retried[0], delivered(), at(62)).await;
    assert_eq!(
        names(&written, &claim_ordered(&store, "w", 10, at(62)).await),
        vec![2]
    );
}

/// A head dead-lettered lets its key move on; one that failed for good (waiting for an
/// operator) does not.
pub async fn a_dead_letter_frees_its_key_and_a_failure_for_an_operator_holds_it(store: DynStore) {
    let written = interleaved(&store).await;
    let first = claim_ordered(&store, "w", 10, t0()).await;
    for c in &first {
        let completion = if c.id() == written[0].id {
            Completion::DeadLettered {
                error: boom(),
                reason: Some("poison".into()),
            }
        } else if c.id() == written[1].id {
            Completion::Failed {
                error: boom(),
                next_retry: None,
            }
        } else {
            delivered()
        };
        complete(&store, c, completion, at(1)).await;
    }
    let next = claim_ordered(&store, "w", 10, at(2)).await;
    assert_eq!(
        names(&written, &next),
        vec![2],
        "a2 follows the dead letter; b3 waits behind failed b1"
    );
    assert_eq!(
        durable(&store, written[1].id).await.status,
        EmissionStatus::Failed
    );
}

/// A lease that ran out is reclaimed before anything later of its key, and the late
/// holder's completion is refused as stale.
pub async fn an_expired_head_is_reclaimed_before_later_entries(store: DynStore) {
    let written = interleaved(&store).await;
    let first = claim_ordered(&store, "slow", 10, t0()).await;
    let expired = t0() + lease();
    let reclaimed = claim_ordered(&store, "rescuer", 10, expired).await;
    assert_eq!(
        names(&written, &reclaimed),
        vec![0, 1, 4, 5],
        "the same heads, not a2 or b3"
    );
    let late = first.iter().find(|c| c.id() == written[0].id).unwrap();
    let done = store
        .complete_batch(vec![
            CompletionRequest::new(late.clone(), delivered()).at(expired)
        ])
        .await
        .unwrap();
    assert_outcome(
        &done[0],
        outbox_core::TransitionOutcome::StaleClaim,
        EmissionStatus::Pending,
    );
}

/// Entries without a key are claimed as before, in batches, in claim order.
pub async fn entries_without_a_key_are_claimed_as_usual(store: DynStore) {
    let written = store
        .enqueue_batch((0..5).map(|i| keyed("", i - 5)).collect())
        .await
        .unwrap();
    let claims = claim_ordered(&store, "w", 3, t0()).await;
    assert_eq!(claim_ids(&claims).len(), 3);
    assert_eq!(names(&written, &claims), vec![0, 1, 2]);
}

/// Workers taking turns never hold two entries of one key at once, and each key's
/// entries are claimed in creation order.
pub async fn workers_taking_turns_follow_each_keys_order(store: DynStore) {
    let entries: Vec<NewEntry> = (0..60)
        .map(|i| keyed(&format!("k{}", i % 7), i - 60))
        .collect();
    let written = store.enqueue_batch(entries).await.unwrap();
    let key_of: HashMap<EntryId, String> = written
        .iter()
        .map(|e| (e.id, e.partition_key.clone().unwrap()))
        .collect();
    let mut claimed_order: HashMap<String, Vec<EntryId>> = HashMap::new();
    let mut round = 0;
    while claimed_order.values().map(Vec::len).sum::<usize>() < written.len() {
        round += 1;
        assert!(round < 200, "the keys stopped moving");
        let now = at(round);
        let mut held = Vec::new();
        for w in 0..3 {
            let claims = claim_ordered(&store, &format!("w{w}"), 4, now).await;
            held.extend(claims);
        }
        let keys: HashSet<&String> = held.iter().map(|c| &key_of[&c.id()]).collect();
        assert_eq!(
            keys.len(),
            held.len(),
            "two entries of one key leased at once"
        );
        for c in &held {
            claimed_order
                .entry(key_of[&c.id()].clone())
                .or_default()
                .push(c.id());
            complete(&store, c, delivered(), now).await;
        }
    }
    for (key, order) in claimed_order {
        let expected: Vec<EntryId> = written
            .iter()
            .filter(|e| e.partition_key.as_deref() == Some(key.as_str()))
            .map(|e| e.id)
            .collect();
        assert_eq!(order, expected, "key {key} out of order");
    }
}

/// N slice claims take every entry exactly once between them, each entry in the slice
/// its hash names, and never split a key.
pub async fn slices_take_every_entry_exactly_once(store: DynStore) {
    let keys = ["x", "y", "z", "w", "v"];
    let entries: Vec<NewEntry> = (0..90_usize)
        .map(|i| {
            let key = if i % 9 == 0 { "" } else { keys[i % 5] };
            keyed(key, i64::try_from(i).expect("small") - 90)
        })
        .collect();
    let written = store.enqueue_batch(entries).await.unwrap();
    let count = 3;
    let mut seen: HashMap<EntryId, u32> = HashMap::new();
    for index in 0..count {
        let slice = Slice::new(index, count).unwrap();
        let claims = store
            .claim_pending(&ClaimRequest::new("w", 100, lease()).at(t0()).slice(slice))
            .await
            .unwrap();
        for c in &claims {
            assert!(
                slice.contains(c.entry.partition_key.as_deref(), c.id()),
                "{slice}: {:?}",
                c.entry
            );
            assert!(
                seen.insert(c.id(), index).is_none(),
                "claimed by two slices"
            );
        }
    }
    assert_eq!(seen.len(), written.len(), "entries no slice took");
    let mut slice_of_key: HashMap<&str, u32> = HashMap::new();
    for e in &written {
        if let Some(k) = e.partition_key.as_deref() {
            assert_eq!(
                *slice_of_key.entry(k).or_insert(seen[&e.id]),
                seen[&e.id],
                "key {k} split"
            );
        }
    }
}

/// Finds by slice, pending and retry-ready, split the entries as claims do: each found
/// entry is in the slice asked for, and the slices together find each entry once.
pub async fn slice_finds_split_the_entries(store: DynStore) {
    let keys = ["x", "y", "z", "w", "v", "u"];
    let entries: Vec<NewEntry> = (0..60_usize)
        .map(|i| keyed(keys[i % 6], i64::try_from(i).expect("small") - 60))
        .collect();
    let written = store.enqueue_batch(entries).await.unwrap();
    // A few wait for their retry, so both finds have something to find.
    let waiting = store
        .claim_pending(&claim_req("w", 5, t0()))
        .await
        .expect("claim");
    for claim in &waiting {
        let failed = Completion::Failed {
            error: boom(),
            next_retry: Some(at(1)),
        };
        complete(&store, claim, failed, t0()).await;
    }
    let count = 4;
    let mut seen: HashSet<EntryId> = HashSet::new();
    for index in 0..count {
        let slice = Slice::new(index, count).unwrap();
        let req = FindRequest::new(100).at(at(5)).slice(slice);
        let mut found = store.find_retry_ready(&req).await.unwrap();
        found.extend(store.find_pending(&req).await.unwrap());
        for e in found {
            assert!(
                slice.contains(e.partition_key.as_deref(), e.id),
                "{slice}: {e:?}"
            );
            assert!(seen.insert(e.id), "found by two slices");
        }
    }
    assert_eq!(seen.len(), written.len(), "entries no slice found");
}

/// An entry enqueued late with an earlier creation time than its key's head (a host
/// transaction that committed late) becomes the head: claim order is creation order.
pub async fn a_late_entry_older_than_the_head_takes_its_place(store: DynStore) {
    let head = store.enqueue_batch(vec![keyed("a", -5)]).await.unwrap();
    let late = store.enqueue_batch(vec![keyed("a", -9)]).await.unwrap();
    let first = claim_ordered(&store, "w", 10, t0()).await;
    assert_eq!(
        claim_ids(&first),
        vec![late[0].id],
        "the older entry goes first"
    );
    complete(&store, &first[0], delivered(), at(1)).await;
    let next = claim_ordered(&store, "w", 10, at(1)).await;
    assert_eq!(claim_ids(&next), vec![head[0].id]);
}

/// Per-key order within a slice: the slice's keys move one entry at a time.
pub async fn ordered_slices_combine(store: DynStore) {
    let written = interleaved(&store).await;
    let mut taken = Vec::new();
    for index in 0..2 {
        let req = claim_req("w", 10, t0())
            .in_key_order()
            .slice(Slice::new(index, 2).unwrap());
        taken.extend(store.claim_pending(&req).await.unwrap());
    }
    assert_eq!(
        names(&written, &taken),
        vec![0, 1, 4, 5],
        "the heads, whichever slice"
    );
}
