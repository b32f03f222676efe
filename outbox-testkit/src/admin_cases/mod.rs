//! The operator operations every store offers: stats, dead letters, requeue, purge; the
//! listings and the by-topic picture are in `listing.rs`.

use std::sync::Arc;

use chrono::TimeDelta;
use outbox_core::{
    AdminClaimStore, Completion, CompletionRequest, DeadLetterSelection, EmissionResult,
    EmissionStatus, EntryId,
};

use crate::fixtures::*;

mod listing;
pub use listing::*;

/// The store under test, with its operator operations.
pub type AdminStore = Arc<dyn AdminClaimStore>;

/// The statuses that do not wait for an operator: requeue and purge refuse them.
const NOT_WAITING: [EmissionStatus; 4] = [
    EmissionStatus::Pending,
    EmissionStatus::Delivered,
    EmissionStatus::Deferred,
    EmissionStatus::RetryableFailure,
];

pub(super) fn as_claim_store(store: &AdminStore) -> DynStore {
    store.clone()
}

/// Builds one row in each state and returns their ids:
/// [pending, leased, expired lease, delivered, deferred due, retryable later, failed, dead x2].
pub(super) async fn one_of_each(store: &AdminStore) -> Vec<EntryId> {
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
    let stats = store
        .stats(&outbox_core::StatsRequest::new().at(t0()))
        .await
        .unwrap();
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
    let exact = store
        .stats(&outbox_core::StatsRequest::new().at(t0()))
        .await
        .unwrap();
    let live = store
        .live_stats(&outbox_core::StatsRequest::new().at(t0()))
        .await
        .unwrap();
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
    let empty = store
        .live_stats(&outbox_core::StatsRequest::new().at(t0()))
        .await
        .unwrap();
    assert!(!empty.is_drained(), "rows are pending");
}

/// An empty outbox is drained.
pub async fn stats_of_an_empty_outbox(store: AdminStore) {
    let stats = store
        .stats(&outbox_core::StatsRequest::new().at(t0()))
        .await
        .unwrap();
    assert!(stats.is_drained());
    assert_eq!(stats.counts.values().sum::<u64>(), 0);
    assert_eq!(stats.oldest_pending_created_at, None);
    assert_eq!(stats.claims_made, Some(0));
    let live = store
        .live_stats(&outbox_core::StatsRequest::new().at(t0()))
        .await
        .unwrap();
    assert!(live.is_drained());
    assert_eq!(live.counts.values().sum::<u64>(), 0);
}

/// Dead letters are listed most recent first, up to the limit; a limit of 0 is refused.
pub async fn dead_letters_are_listed_newest_first(store: AdminStore) {
    let rows = one_of_each(&store).await;
    let listed = store
        .dead_letters(&outbox_core::DeadLettersRequest::new(10))
        .await
        .unwrap();
    assert_eq!(ids(&listed), vec![rows[7], rows[6]]);
    assert_eq!(
        store
            .dead_letters(&outbox_core::DeadLettersRequest::new(1))
            .await
            .unwrap()
            .len(),
        1
    );
    assert!(store
        .dead_letters(&outbox_core::DeadLettersRequest::new(0))
        .await
        .unwrap_err()
        .is_invalid_input());
}

/// Requeue makes one dead letter (or all) pending with a fresh attempt budget; other
/// rows are never touched.
pub async fn requeue_restores_dead_letters(store: AdminStore) {
    let ids = one_of_each(&store).await;
    let failed_before = store.get(ids[5]).await.unwrap().unwrap();
    assert_eq!(
        store
            .requeue(
                &outbox_core::RequeueRequest::dead_letters(DeadLetterSelection::One(ids[5]))
                    .at(t0())
            )
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
            .requeue(
                &outbox_core::RequeueRequest::dead_letters(DeadLetterSelection::One(ids[6]))
                    .at(t0())
            )
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
            .requeue(&outbox_core::RequeueRequest::dead_letters(DeadLetterSelection::All).at(t0()))
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        store
            .stats(&outbox_core::StatsRequest::new().at(t0()))
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
            .purge(&outbox_core::PurgeRequest::dead_letters(
                DeadLetterSelection::One(ids[2])
            ))
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
            .purge(&outbox_core::PurgeRequest::dead_letters(
                DeadLetterSelection::One(ids[6])
            ))
            .await
            .unwrap(),
        1
    );
    assert!(store.get(ids[6]).await.unwrap().is_none());
    assert_eq!(
        store
            .purge(&outbox_core::PurgeRequest::dead_letters(
                DeadLetterSelection::All
            ))
            .await
            .unwrap(),
        1
    );
    let stats = store
        .stats(&outbox_core::StatsRequest::new().at(t0()))
        .await
        .unwrap();
    assert_eq!(stats.counts.values().sum::<u64>(), 7);
}

/// Failed entries (which wait for an operator) are purged like dead letters, one or all;
/// statuses that do not wait for an operator are refused and nothing is deleted.
pub async fn purge_deletes_failed_entries(store: AdminStore) {
    let ids = one_of_each(&store).await;
    let failed = EmissionStatus::Failed;
    assert_eq!(
        store
            .purge(&outbox_core::PurgeRequest::new(
                failed,
                DeadLetterSelection::One(ids[6])
            ))
            .await
            .unwrap(),
        0,
        "a dead letter was purged as failed"
    );
    assert_eq!(
        store
            .purge(&outbox_core::PurgeRequest::new(
                failed,
                DeadLetterSelection::All
            ))
            .await
            .unwrap(),
        1
    );
    assert!(store.get(ids[5]).await.unwrap().is_none());
    for status in NOT_WAITING {
        let err = store
            .purge(&outbox_core::PurgeRequest::new(
                status,
                DeadLetterSelection::All,
            ))
            .await
            .unwrap_err();
        assert!(err.is_invalid_input(), "{status:?}: {err}");
    }
    let stats = store
        .stats(&outbox_core::StatsRequest::new().at(t0()))
        .await
        .unwrap();
    assert_eq!(
        stats.counts.values().sum::<u64>(),
        8,
        "only the failed row went"
    );
    assert_eq!(stats.count(EmissionStatus::DeadLettered), 2);
}

/// Failed entries (which wait for an operator) are requeued like dead letters; statuses
/// that do not wait for an operator are refused.
pub async fn requeue_restores_failed_entries(store: AdminStore) {
    let rows = one_of_each(&store).await;
    let failed = EmissionStatus::Failed;
    assert_eq!(
        store
            .requeue(
                &outbox_core::RequeueRequest::new(failed, DeadLetterSelection::One(rows[6]))
                    .at(t0())
            )
            .await
            .unwrap(),
        0,
        "a dead letter was requeued as failed"
    );
    assert_eq!(
        store
            .requeue(&outbox_core::RequeueRequest::new(failed, DeadLetterSelection::All).at(t0()))
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
            .requeue(&outbox_core::RequeueRequest::new(status, DeadLetterSelection::All).at(t0()))
            .await
            .unwrap_err();
        assert!(err.is_invalid_input(), "{status:?}: {err}");
    }
    assert_eq!(
        store
            .stats(&outbox_core::StatsRequest::new().at(t0()))
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
#[doc(hidden)]
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
        .requeue(
            &outbox_core::RequeueRequest::dead_letters(DeadLetterSelection::One(written[0].id))
                .at(at(3)),
        )
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
#[doc(hidden)]
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
