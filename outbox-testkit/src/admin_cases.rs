//! The operator operations every store offers: stats, dead letters, requeue, purge.

use std::sync::Arc;

use chrono::TimeDelta;
use outbox_core::{
    AdminClaimStore, Completion, CompletionRequest, DeadLetterSelection, EmissionResult,
    EmissionStatus, EntryId, ListRequest,
};

use crate::fixtures::*;

/// The store under test, with its operator operations.
pub type AdminStore = Arc<dyn AdminClaimStore>;

/// The statuses that do not wait for an operator: requeue and purge refuse them.
const NOT_WAITING: [EmissionStatus; 4] = [
    EmissionStatus::Pending,
    EmissionStatus::Delivered,
    EmissionStatus::Deferred,
    EmissionStatus::RetryableFailure,
];

fn as_claim_store(store: &AdminStore) -> DynStore {
    store.clone()
}

/// Builds one row in each state and returns their ids:
/// [pending, leased, expired lease, delivered, deferred due, retryable later, failed, dead x2].
async fn one_of_each(store: &AdminStore) -> Vec<EntryId> {
    let s = as_claim_store(store);
    let rows = seed(&s, 9).await;
    let claims = s.claim_pending(&claim_req("w", 8, at(-100))).await.unwrap();
    assert_eq!(claims.len(), 8);
    let complete = |i: usize, c: Completion, secs: i64| {
        CompletionRequest::new(claims[i].clone(), c).at(at(secs))
    };
    s.complete_batch(vec![
        complete(2, Completion::Delivered(EmissionResult::new()), -50),
        complete(
            3,
            Completion::Deferred {
                until: at(-1),
                reason: None,
            },
            -50,
        ),
        complete(
            4,
            Completion::Failed {
                error: boom(),
                next_retry: Some(at(500)),
            },
            -50,
        ),
        complete(
            5,
            Completion::Failed {
                error: boom(),
                next_retry: None,
            },
            -50,
        ),
        complete(
            6,
            Completion::DeadLettered {
                error: boom(),
                reason: None,
            },
            -40,
        ),
        complete(
            7,
            Completion::DeadLettered {
                error: boom(),
                reason: None,
            },
            -30,
        ),
        // Row 0: released and left pending; row 1: claimed again below, still leased.
        complete(0, Completion::Release { reason: None }, -50),
    ])
    .await
    .unwrap();
    let held = outbox_core::ClaimRequest::new("held", 1, TimeDelta::seconds(60)).at(at(-10));
    assert_eq!(s.claim_pending(&held).await.unwrap().len(), 1);
    // Row 8 was never claimed; row 1's first lease (from at(-100)) expired at at(-70).
    rows.iter().map(|e| e.id).collect()
}

/// Stats count every status, the oldest pending row, due retries, and lease states.
pub async fn stats_describe_every_state(store: AdminStore) {
    let ids = one_of_each(&store).await;
    let stats = store.stats(Some(t0())).await.unwrap();
    // Pending: row 0 (claimed again by "held"), row 1 (expired lease), row 8 (never claimed).
    assert_eq!(stats.count(EmissionStatus::Pending), 3);
    assert_eq!(stats.count(EmissionStatus::Delivered), 1);
    assert_eq!(stats.count(EmissionStatus::Deferred), 1);
    assert_eq!(stats.count(EmissionStatus::RetryableFailure), 1);
    assert_eq!(stats.count(EmissionStatus::Failed), 1);
    assert_eq!(stats.count(EmissionStatus::DeadLettered), 2);
    assert_eq!(stats.counts.len(), 6, "every status is listed");
    assert_eq!(stats.retry_ready, 1, "only the deferred row is due");
    assert_eq!(stats.claims_in_flight, 1);
    assert_eq!(stats.expired_leases, 1);
    assert_eq!(
        stats.claims_made,
        Some(9),
        "eight rows claimed once, then one of them again"
    );
    let oldest = store.get(ids[0]).await.unwrap().unwrap().created_at;
    assert_eq!(stats.oldest_pending_created_at, Some(oldest));
    assert!(!stats.is_drained());
}

/// The live picture counts what is live exactly, as the full count does; only delivered
/// may be an estimate, and only when it says so.
pub async fn live_stats_count_what_is_live(store: AdminStore) {
    one_of_each(&store).await;
    let exact = store.stats(Some(t0())).await.unwrap();
    let live = store.live_stats(Some(t0())).await.unwrap();
    for status in EmissionStatus::ALL {
        if status != EmissionStatus::Delivered || !live.delivered_estimated {
            assert_eq!(
                live.count(status),
                exact.count(status),
                "{}",
                status.as_str()
            );
        }
    }
    assert_eq!(
        (
            live.oldest_pending_created_at,
            live.retry_ready,
            live.claims_in_flight,
            live.expired_leases
        ),
        (
            exact.oldest_pending_created_at,
            exact.retry_ready,
            exact.claims_in_flight,
            exact.expired_leases
        )
    );
    assert!(!exact.delivered_estimated, "the full count is exact");
    assert!(
        exact.claims_made.is_some(),
        "the full count sums the claims"
    );
    let empty = store.live_stats(Some(t0())).await.unwrap();
    assert!(!empty.is_drained(), "rows are pending");
}

/// An empty outbox is drained.
pub async fn stats_of_an_empty_outbox(store: AdminStore) {
    let stats = store.stats(Some(t0())).await.unwrap();
    assert!(stats.is_drained());
    assert_eq!(stats.counts.values().sum::<u64>(), 0);
    assert_eq!(stats.oldest_pending_created_at, None);
    assert_eq!(stats.claims_made, Some(0));
    let live = store.live_stats(Some(t0())).await.unwrap();
    assert!(live.is_drained());
    assert_eq!(live.counts.values().sum::<u64>(), 0);
}

/// Dead letters are listed most recent first, up to the limit; a limit of 0 is refused.
pub async fn dead_letters_are_listed_newest_first(store: AdminStore) {
    let rows = one_of_each(&store).await;
    let listed = store.dead_letters(10).await.unwrap();
    assert_eq!(ids(&listed), vec![rows[7], rows[6]]);
    assert_eq!(store.dead_letters(1).await.unwrap().len(), 1);
    assert!(store.dead_letters(0).await.unwrap_err().is_invalid_input());
}

/// Requeue makes one dead letter (or all) pending with a fresh attempt budget; other
/// rows are never touched.
pub async fn requeue_restores_dead_letters(store: AdminStore) {
    let ids = one_of_each(&store).await;
    let failed_before = store.get(ids[5]).await.unwrap().unwrap();
    assert_eq!(
        store
            .requeue_dead_letters(DeadLetterSelection::One(ids[5]), Some(t0()))
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        store.get(ids[5]).await.unwrap().unwrap(),
        failed_before,
        "a failed row was requeued"
    );
    assert_eq!(
        store
            .requeue_dead_letters(DeadLetterSelection::One(ids[6]), Some(t0()))
            .await
            .unwrap(),
        1
    );
    let row = store.get(ids[6]).await.unwrap().unwrap();
    assert_eq!(
        (
            row.status,
            row.attempt_count,
            row.dead_letter_reason.clone()
        ),
        (EmissionStatus::Pending, 0, None)
    );
    assert_eq!(
        row.last_error.as_deref(),
        Some("provider said no"),
        "the history is kept"
    );
    assert_eq!(row.updated_at, t0());
    assert_eq!(
        store
            .requeue_dead_letters(DeadLetterSelection::All, Some(t0()))
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        store
            .stats(Some(t0()))
            .await
            .unwrap()
            .count(EmissionStatus::DeadLettered),
        0
    );
    let claimable = as_claim_store(&store)
        .claim_pending(&claim_req("w", 10, at(1)))
        .await
        .unwrap();
    assert!(claim_ids(&claimable).contains(&ids[6]) && claim_ids(&claimable).contains(&ids[7]));
}

/// Purge deletes dead letters only: one by id, or all.
pub async fn purge_deletes_only_dead_letters(store: AdminStore) {
    let ids = one_of_each(&store).await;
    assert_eq!(
        store
            .purge_dead_letters(DeadLetterSelection::One(ids[2]))
            .await
            .unwrap(),
        0
    );
    assert!(
        store.get(ids[2]).await.unwrap().is_some(),
        "a delivered row was purged"
    );
    assert_eq!(
        store
            .purge_dead_letters(DeadLetterSelection::One(ids[6]))
            .await
            .unwrap(),
        1
    );
    assert!(store.get(ids[6]).await.unwrap().is_none());
    assert_eq!(
        store
            .purge_dead_letters(DeadLetterSelection::All)
            .await
            .unwrap(),
        1
    );
    let stats = store.stats(Some(t0())).await.unwrap();
    assert_eq!(stats.counts.values().sum::<u64>(), 7);
}

/// Failed entries (which wait for an operator) are purged like dead letters, one or all;
/// statuses that do not wait for an operator are refused and nothing is deleted.
pub async fn purge_deletes_failed_entries(store: AdminStore) {
    let ids = one_of_each(&store).await;
    let failed = EmissionStatus::Failed;
    assert_eq!(
        store
            .purge(failed, DeadLetterSelection::One(ids[6]))
            .await
            .unwrap(),
        0,
        "a dead letter was purged as failed"
    );
    assert_eq!(
        store.purge(failed, DeadLetterSelection::All).await.unwrap(),
        1
    );
    assert!(store.get(ids[5]).await.unwrap().is_none());
    for status in NOT_WAITING {
        let err = store
            .purge(status, DeadLetterSelection::All)
            .await
            .unwrap_err();
        assert!(err.is_invalid_input(), "{status:?}: {err}");
    }
    let stats = store.stats(Some(t0())).await.unwrap();
    assert_eq!(
        stats.counts.values().sum::<u64>(),
        8,
        "only the failed row went"
    );
    assert_eq!(stats.count(EmissionStatus::DeadLettered), 2);
}

/// Listing pages through one status in creation order, with a topic filter and a cursor.
pub async fn list_pages_through_one_status(store: AdminStore) {
    let rows = one_of_each(&store).await;
    let page = |status, limit, after| {
        let store = store.clone();
        async move {
            let mut req = ListRequest::new(status, limit);
            req.after = after;
            ids(&store.list(&req).await.unwrap())
        }
    };
    assert_eq!(
        page(EmissionStatus::Pending, 2, None).await,
        vec![rows[0], rows[1]]
    );
    assert_eq!(
        page(EmissionStatus::Pending, 2, Some(rows[1])).await,
        vec![rows[8]]
    );
    assert!(page(EmissionStatus::Pending, 2, Some(rows[8]))
        .await
        .is_empty());
    assert_eq!(
        page(EmissionStatus::DeadLettered, 10, None).await,
        vec![rows[6], rows[7]]
    );
    assert_eq!(page(EmissionStatus::Failed, 10, None).await, vec![rows[5]]);
    assert!(
        page(EmissionStatus::Pending, 10, Some(EntryId::new()))
            .await
            .is_empty(),
        "an unknown cursor gives an empty page"
    );
    let topic = store.get(rows[0]).await.unwrap().unwrap().topic;
    let mut req = ListRequest::new(EmissionStatus::Pending, 10);
    req.topic = Some(topic);
    assert_eq!(store.list(&req).await.unwrap().len(), 3);
    req.topic = Some("no-such-topic".into());
    assert!(store.list(&req).await.unwrap().is_empty());
    let zero = ListRequest::new(EmissionStatus::Pending, 0);
    assert!(store.list(&zero).await.unwrap_err().is_invalid_input());
    let mut blank = ListRequest::new(EmissionStatus::Pending, 10);
    blank.partition_key = Some(" ".into());
    assert!(store.list(&blank).await.unwrap_err().is_invalid_input());
}

/// A listing filtered by partition key shows only that key's entries, in every status,
/// delivered included.
pub async fn list_filters_by_partition_key(store: AdminStore) {
    let s = as_claim_store(&store);
    let keys = ["k1", "k2", "k1", "k1"];
    let entries = keys
        .iter()
        .zip(0i64..)
        .map(|(k, i)| new_entry(i - 10).partition_key(*k))
        .collect();
    let rows = s.enqueue_batch(entries).await.unwrap();
    let claims = s.claim_pending(&claim_req("w", 2, at(0))).await.unwrap();
    let delivered = claims
        .iter()
        .map(|c| {
            CompletionRequest::new(c.clone(), Completion::Delivered(EmissionResult::new()))
                .at(at(1))
        })
        .collect();
    s.complete_batch(delivered).await.unwrap();
    let keyed = |status, key: &str| {
        let store = store.clone();
        let key = key.to_owned();
        async move {
            let mut req = ListRequest::new(status, 10);
            req.partition_key = Some(key);
            ids(&store.list(&req).await.unwrap())
        }
    };
    assert_eq!(
        keyed(EmissionStatus::Pending, "k1").await,
        vec![rows[2].id, rows[3].id]
    );
    assert_eq!(
        keyed(EmissionStatus::Delivered, "k1").await,
        vec![rows[0].id]
    );
    assert_eq!(
        keyed(EmissionStatus::Delivered, "k2").await,
        vec![rows[1].id]
    );
    assert!(keyed(EmissionStatus::Pending, "k2").await.is_empty());
    assert!(keyed(EmissionStatus::Pending, "none").await.is_empty());
}

/// Delivered entries page from the most recent delivery back; entries delivered at the
/// same instant come in one order on every page (none twice, none skipped), and a cursor
/// that is not a delivered entry gives an empty page.
pub async fn list_pages_delivered_newest_first(store: AdminStore) {
    let s = as_claim_store(&store);
    let rows = seed(&s, 5).await;
    let claims = s.claim_pending(&claim_req("w", 5, at(-100))).await.unwrap();
    assert_eq!(claims.len(), 5);
    let by_id = |id: EntryId| claims.iter().find(|c| c.entry.id == id).unwrap().clone();
    let deliver = |i: usize, secs: i64| {
        CompletionRequest::new(
            by_id(rows[i].id),
            Completion::Delivered(EmissionResult::new()),
        )
        .at(at(secs))
    };
    s.complete_batch(vec![
        deliver(0, -50),
        deliver(1, -40),
        deliver(2, -30),
        deliver(3, -30),
    ])
    .await
    .unwrap();
    let page = |limit, after| {
        let store = store.clone();
        async move {
            let mut req = ListRequest::new(EmissionStatus::Delivered, limit);
            req.after = after;
            ids(&store.list(&req).await.unwrap())
        }
    };
    let first = page(2, None).await;
    let mut newest = first.clone();
    newest.sort();
    let mut tied = vec![rows[2].id, rows[3].id];
    tied.sort();
    assert_eq!(newest, tied, "the two delivered last come first");
    assert_eq!(page(2, Some(first[1])).await, vec![rows[1].id, rows[0].id]);
    assert!(page(2, Some(rows[0].id)).await.is_empty());
    // One at a time: every delivered entry once, in the order of the full page.
    let mut walked = Vec::new();
    let mut after = None;
    loop {
        let one = page(1, after).await;
        let Some(id) = one.first().copied() else {
            break;
        };
        walked.push(id);
        after = Some(id);
        assert!(walked.len() <= 4, "the walk does not end: {walked:?}");
    }
    assert_eq!(walked, page(10, None).await);
    assert_eq!(walked[2..], [rows[1].id, rows[0].id]);
    assert!(
        page(10, Some(rows[4].id)).await.is_empty(),
        "a leased entry is no cursor into the delivered history"
    );
    let mut req = ListRequest::new(EmissionStatus::Delivered, 10);
    req.topic = Some(rows[0].topic.clone());
    let same_topic = rows[..4]
        .iter()
        .filter(|e| e.topic == rows[0].topic)
        .count();
    assert_eq!(store.list(&req).await.unwrap().len(), same_topic);
    req.topic = Some("no-such-topic".into());
    assert!(store.list(&req).await.unwrap().is_empty());
}

/// The by-topic picture counts each topic's live entries by status and its oldest pending
/// entry, busiest topic first, never the delivered ones; a requeue or purge of one topic
/// touches only that topic's entries; a bad topic or limit is refused and changes nothing.
pub async fn topics_are_counted_requeued_and_purged_apart(store: AdminStore) {
    let s = as_claim_store(&store);
    let entries = (0..7)
        .map(|i: i64| {
            let topic = if i < 3 { "a" } else { "b" };
            outbox_core::NewEntry::new(topic, vec![b'x']).created_at(at(i - 10))
        })
        .collect();
    let rows = s.enqueue_batch(entries).await.unwrap();
    let claims = s.claim_pending(&claim_req("w", 7, at(0))).await.unwrap();
    assert_eq!(claims.len(), 7);
    let complete = |i: usize, c: Completion| {
        let claim = claims.iter().find(|c| c.entry.id == rows[i].id).unwrap();
        CompletionRequest::new(claim.clone(), c).at(at(1))
    };
    let dead = || Completion::DeadLettered {
        error: boom(),
        reason: None,
    };
    s.complete_batch(vec![
        complete(0, Completion::Delivered(EmissionResult::new())),
        complete(1, dead()),
        complete(3, dead()),
        complete(4, dead()),
        complete(
            5,
            Completion::Failed {
                error: boom(),
                next_retry: None,
            },
        ),
        complete(6, Completion::Release { reason: None }),
    ])
    .await
    .unwrap();
    // Row 2 stays leased: pending, counted as pending.
    let topics = store.topic_stats(10).await.unwrap();
    let names: Vec<&str> = topics.iter().map(|t| t.topic.as_str()).collect();
    assert_eq!(names, ["b", "a"], "the busiest topic first");
    let (b, a) = (&topics[0], &topics[1]);
    assert_eq!(
        (
            b.count(EmissionStatus::Pending),
            b.count(EmissionStatus::DeadLettered),
            b.count(EmissionStatus::Failed),
            b.live()
        ),
        (1, 2, 1, 4)
    );
    assert_eq!(b.oldest_pending_created_at, Some(rows[6].created_at));
    assert_eq!(
        (
            a.count(EmissionStatus::Pending),
            a.count(EmissionStatus::DeadLettered),
            a.live()
        ),
        (1, 1, 2),
        "the delivered entry is not live"
    );
    assert_eq!(a.oldest_pending_created_at, Some(rows[2].created_at));
    assert!(!a.counts.contains_key(&EmissionStatus::Delivered));
    assert_eq!(store.topic_stats(1).await.unwrap().len(), 1);
    assert!(store.topic_stats(0).await.unwrap_err().is_invalid_input());

    let bad = DeadLetterSelection::Topic(" ".into());
    let err = store
        .requeue(EmissionStatus::DeadLettered, bad.clone(), Some(at(2)))
        .await
        .unwrap_err();
    assert!(err.is_invalid_input(), "{err}");
    assert!(store
        .purge(EmissionStatus::DeadLettered, bad)
        .await
        .unwrap_err()
        .is_invalid_input());
    let by_topic = |topic: &str| DeadLetterSelection::Topic(topic.into());
    let requeued = store
        .requeue(EmissionStatus::DeadLettered, by_topic("a"), Some(at(2)))
        .await
        .unwrap();
    assert_eq!(requeued, 1, "only topic a's dead letter");
    assert_eq!(
        store.get(rows[1].id).await.unwrap().unwrap().status,
        EmissionStatus::Pending
    );
    let purged = store
        .purge(EmissionStatus::DeadLettered, by_topic("b"))
        .await
        .unwrap();
    assert_eq!(purged, 2);
    assert_eq!(
        store
            .purge(EmissionStatus::Failed, by_topic("a"))
            .await
            .unwrap(),
        0,
        "topic a has no failed entry; b's stays"
    );
    let topics = store.topic_stats(10).await.unwrap();
    let b = topics.iter().find(|t| t.topic == "b").unwrap();
    assert_eq!(
        (
            b.count(EmissionStatus::DeadLettered),
            b.count(EmissionStatus::Failed)
        ),
        (0, 1)
    );
    let a = topics.iter().find(|t| t.topic == "a").unwrap();
    assert_eq!((a.count(EmissionStatus::Pending), a.live()), (2, 2));
}

/// Failed entries (which wait for an operator) are requeued like dead letters; statuses
/// that do not wait for an operator are refused.
pub async fn requeue_restores_failed_entries(store: AdminStore) {
    let rows = one_of_each(&store).await;
    let failed = EmissionStatus::Failed;
    assert_eq!(
        store
            .requeue(failed, DeadLetterSelection::One(rows[6]), Some(t0()))
            .await
            .unwrap(),
        0,
        "a dead letter was requeued as failed"
    );
    assert_eq!(
        store
            .requeue(failed, DeadLetterSelection::All, Some(t0()))
            .await
            .unwrap(),
        1
    );
    let row = store.get(rows[5]).await.unwrap().unwrap();
    assert_eq!(
        (row.status, row.attempt_count, row.updated_at),
        (EmissionStatus::Pending, 0, t0())
    );
    assert_eq!(row.last_error.as_deref(), Some("provider said no"));
    for status in NOT_WAITING {
        let err = store
            .requeue(status, DeadLetterSelection::All, Some(t0()))
            .await
            .unwrap_err();
        assert!(err.is_invalid_input(), "{status:?}: {err}");
    }
    assert_eq!(
        store
            .stats(Some(t0()))
            .await
            .unwrap()
            .count(EmissionStatus::DeadLettered),
        2,
        "dead letters were touched"
    );
}

/// The count a prune's dry run shows is what the prune then deletes.
pub async fn count_delivered_before_matches_prune(store: AdminStore) {
    let rows = one_of_each(&store).await;
    let delivered_at = store
        .get(rows[2])
        .await
        .unwrap()
        .unwrap()
        .delivered_at
        .unwrap();
    let just_after = delivered_at + TimeDelta::microseconds(1);
    assert_eq!(store.count_delivered_before(delivered_at).await.unwrap(), 0);
    assert_eq!(store.count_delivered_before(just_after).await.unwrap(), 1);
    let pruned = store
        .prune_delivered(&outbox_core::PruneRequest {
            delivered_before: just_after,
            batch_size: 10,
        })
        .await
        .unwrap();
    assert_eq!(pruned, 1);
    assert_eq!(store.count_delivered_before(just_after).await.unwrap(), 0);
}

/// Stamps out one `#[tokio::test]` per operator case; `$factory` is an async fn returning
/// `Option<AdminStore>` (`None` when the engine is unreachable, already reported).
#[macro_export]
macro_rules! admin_suite {
    ($factory:expr) => {
        $crate::__admin_cases!($factory; stats_describe_every_state, live_stats_count_what_is_live, stats_of_an_empty_outbox,
            dead_letters_are_listed_newest_first, requeue_restores_dead_letters,
            purge_deletes_only_dead_letters, purge_deletes_failed_entries,
            list_pages_through_one_status, list_pages_delivered_newest_first,
            topics_are_counted_requeued_and_purged_apart, list_filters_by_partition_key,
            requeue_restores_failed_entries, count_delivered_before_matches_prune);
    };
}

/// In per-key order, a requeued dead letter is its key's oldest entry not yet terminal
/// again: it goes ahead of the key's later entries, and waits while one of them holds a
/// lease. Needs a store with ordered claims on the factory's table.
pub async fn a_requeued_dead_letter_goes_back_ahead_of_its_key(store: AdminStore) {
    assert!(store.capabilities().ordered_claims, "an ordered table");
    let s = as_claim_store(&store);
    let written = s
        .enqueue_batch(
            (0..3)
                .map(|i| new_entry(i - 10).partition_key("a"))
                .collect(),
        )
        .await
        .unwrap();
    let ordered = |n, secs| claim_req("w", n, at(secs)).in_key_order();
    let first = s.claim_pending(&ordered(10, 0)).await.unwrap();
    assert_eq!(claim_ids(&first), vec![written[0].id]);
    let dead = Completion::DeadLettered {
        error: boom(),
        reason: None,
    };
    s.complete_batch(vec![
        CompletionRequest::new(first[0].clone(), dead).at(at(1))
    ])
    .await
    .unwrap();
    let second = s.claim_pending(&ordered(10, 2)).await.unwrap();
    assert_eq!(claim_ids(&second), vec![written[1].id], "the key moved on");
    let requeued = store
        .requeue_dead_letters(DeadLetterSelection::One(written[0].id), Some(at(3)))
        .await
        .unwrap();
    assert_eq!(requeued, 1);
    assert!(
        s.claim_pending(&ordered(10, 4)).await.unwrap().is_empty(),
        "the key's lease holds it while the requeued entry waits"
    );
    s.complete_batch(vec![CompletionRequest::new(
        second[0].clone(),
        Completion::Delivered(EmissionResult::new()),
    )
    .at(at(5))])
        .await
        .unwrap();
    let again = s.claim_pending(&ordered(10, 6)).await.unwrap();
    assert_eq!(
        claim_ids(&again),
        vec![written[0].id],
        "the requeued entry, ahead of the key's last"
    );
}

/// Stamps out the operator cases of per-key order for a factory whose store has ordered
/// claims (`Capabilities::ordered_claims`); `$factory` as for [`admin_suite!`].
#[macro_export]
macro_rules! ordered_admin_suite {
    ($factory:expr) => {
        mod ordered_admin_cases {
            #[allow(unused_imports)]
            use super::*;
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn a_requeued_dead_letter_goes_back_ahead_of_its_key() {
                let Some((store, guard)) = ($factory)().await else {
                    return;
                };
                $crate::admin_cases::a_requeued_dead_letter_goes_back_ahead_of_its_key(store).await;
                drop(guard);
            }
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __admin_cases {
    ($factory:expr; $($case:ident),+ $(,)?) => {
        mod admin_cases {
            #[allow(unused_imports)]
            use super::*;
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let Some((store, guard)) = ($factory)().await else { return };
                    $crate::admin_cases::$case(store).await;
                    drop(guard);
                }
            )+
        }
    };
}
