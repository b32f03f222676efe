//! Claim order: pending by (created, id); retry-ready by (next retry ?? updated, id).

use outbox_core::{Completion, CompletionRequest, EntryId, FindRequest, NewEntry};
use uuid::Uuid;

use crate::fixtures::*;

/// Claims `n` rows one call at a time, so each pick follows the store's own ordering
/// (a batch could be re-sorted after the fact and hide a wrong ORDER BY).
async fn one_at_a_time(
    store: &DynStore,
    retry: bool,
    n: usize,
    now: chrono::DateTime<chrono::Utc>,
) -> Vec<EntryId> {
    let mut picked = Vec::new();
    for _ in 0..n {
        let req = claim_req("w", 1, now);
        let claims = if retry {
            store.claim_retry_ready(&req).await.unwrap()
        } else {
            store.claim_pending(&req).await.unwrap()
        };
        picked.extend(claim_ids(&claims));
    }
    picked
}

/// Records each claim as a retryable failure (at `at(1)`) due at the matching time.
async fn fail_with_retries<const N: usize>(
    store: &DynStore,
    claims: &[outbox_core::Claim],
    retry_at: [chrono::DateTime<chrono::Utc>; N],
) {
    let reqs = claims
        .iter()
        .zip(retry_at)
        .map(|(c, r)| {
            CompletionRequest::new(
                c.clone(),
                Completion::Failed {
                    error: boom(),
                    next_retry: Some(r),
                },
            )
            .at(at(1))
        })
        .collect();
    store.complete_batch(reqs).await.unwrap();
}

/// Pending entries are claimed oldest first, whatever order they were written in.
pub async fn pending_claims_follow_created_time(store: DynStore) {
    let written = store
        .enqueue_batch(vec![new_entry(-1), new_entry(-3), new_entry(-2)])
        .await
        .unwrap();
    let claims = store
        .claim_pending(&claim_req("w", 10, t0()))
        .await
        .unwrap();
    assert_eq!(
        claim_ids(&claims),
        vec![written[1].id, written[2].id, written[0].id]
    );
}

/// Entries created at the same instant are claimed in id order.
pub async fn pending_ties_break_by_id(store: DynStore) {
    let id = |n: u128| EntryId::from_uuid(Uuid::from_u128(n));
    let entries = [3u128, 1, 2]
        .into_iter()
        .map(|n| {
            NewEntry::new("t", b"x".to_vec())
                .with_id(id(n))
                .created_at(at(-5))
        })
        .collect();
    store.enqueue_batch(entries).await.unwrap();
    assert_eq!(
        one_at_a_time(&store, false, 3, t0()).await,
        vec![id(1), id(2), id(3)]
    );
}

/// Consecutive claims walk the pending order without gaps or repeats.
pub async fn consecutive_claims_take_the_next_oldest(store: DynStore) {
    let written = seed(&store, 7).await;
    let first = store.claim_pending(&claim_req("a", 3, t0())).await.unwrap();
    let second = store.claim_pending(&claim_req("b", 3, t0())).await.unwrap();
    let third = store.claim_pending(&claim_req("c", 3, t0())).await.unwrap();
    assert_eq!(claim_ids(&first), ids(&written[0..3]));
    assert_eq!(claim_ids(&second), ids(&written[3..6]));
    assert_eq!(claim_ids(&third), ids(&written[6..7]));
}

/// Retry-ready entries are claimed by next retry time, not by creation time.
pub async fn retry_claims_follow_next_retry_time(store: DynStore) {
    let written = seed(&store, 3).await;
    let claims = store.claim_pending(&claim_req("w", 3, t0())).await.unwrap();
    // Oldest entry retries last, newest first.
    fail_with_retries(&store, &claims, [at(30), at(20), at(10)]).await;
    let retried = store
        .claim_retry_ready(&claim_req("w", 10, at(60)))
        .await
        .unwrap();
    assert_eq!(
        claim_ids(&retried),
        vec![written[2].id, written[1].id, written[0].id]
    );
    // Released, the same rows come back one by one in the same order.
    for c in &retried {
        store.release(c, None).await.unwrap();
    }
    assert_eq!(
        one_at_a_time(&store, true, 3, at(60)).await,
        vec![written[2].id, written[1].id, written[0].id]
    );
}

/// Retry-ready entries with the same retry time are claimed in id order.
pub async fn retry_ties_break_by_id(store: DynStore) {
    let id = |n: u128| EntryId::from_uuid(Uuid::from_u128(n));
    let entries = [(2u128, -2), (3, -3), (1, -1)]
        .into_iter()
        .map(|(n, created)| {
            NewEntry::new("t", b"x".to_vec())
                .with_id(id(n))
                .created_at(at(created))
        })
        .collect();
    store.enqueue_batch(entries).await.unwrap();
    let claims = store.claim_pending(&claim_req("w", 3, t0())).await.unwrap();
    let reqs = claims
        .into_iter()
        .map(|c| {
            CompletionRequest::new(
                c,
                Completion::Deferred {
                    until: at(10),
                    reason: None,
                },
            )
            .at(at(1))
        })
        .collect();
    store.complete_batch(reqs).await.unwrap();
    assert_eq!(
        one_at_a_time(&store, true, 3, at(10)).await,
        vec![id(1), id(2), id(3)]
    );
}

/// A retry-wait entry without a retry time is ordered by its last update.
pub async fn retry_without_next_retry_orders_by_update_time(store: DynStore) {
    let written = seed(&store, 3).await;
    let claims = store.claim_pending(&claim_req("w", 3, t0())).await.unwrap();
    // Saved as retryable without a retry time, newest entry saved first.
    for (claim, saved_at) in claims.iter().zip([at(3), at(2), at(1)]) {
        let mut entry = (*claim.entry).clone();
        entry.status = outbox_core::EmissionStatus::RetryableFailure;
        entry.next_retry_at = None;
        let result = store
            .complete(
                CompletionRequest::new(claim.clone(), Completion::Save(Box::new(entry)))
                    .at(saved_at),
            )
            .await
            .unwrap();
        assert!(result.is_applied());
        assert_eq!(result.entry.updated_at, saved_at);
    }
    assert_eq!(
        one_at_a_time(&store, true, 3, at(10)).await,
        vec![written[2].id, written[1].id, written[0].id]
    );
}

/// The selection-only find lists pending entries in the same order a claim takes them.
pub async fn find_pending_uses_claim_order(store: DynStore) {
    let written = store
        .enqueue_batch(vec![new_entry(-1), new_entry(-3), new_entry(-2)])
        .await
        .unwrap();
    let found = store
        .find_pending(&FindRequest::new(10).at(t0()))
        .await
        .unwrap();
    assert_eq!(
        ids(&found),
        vec![written[1].id, written[2].id, written[0].id]
    );
}

/// The drain's claim takes retry-ready entries first, in retry order, then fills the batch
/// with pending entries in pending order; retries not yet due stay where they are.
pub async fn claim_next_takes_retry_ready_first(store: DynStore) {
    let written = seed(&store, 6).await;
    let failed = store.claim_pending(&claim_req("w", 3, t0())).await.unwrap();
    // The oldest retries last; the third is parked beyond the claims below.
    fail_with_retries(&store, &failed, [at(20), at(10), at(500)]).await;
    let first = store.claim_next(&claim_req("a", 3, at(60))).await.unwrap();
    assert_eq!(
        claim_ids(&first),
        vec![written[1].id, written[0].id, written[3].id]
    );
    let second = store.claim_next(&claim_req("b", 1, at(60))).await.unwrap();
    assert_eq!(claim_ids(&second), vec![written[4].id]);
    let rest = store.claim_next(&claim_req("c", 10, at(60))).await.unwrap();
    assert_eq!(claim_ids(&rest), vec![written[5].id]);
    for claims in [first, second, rest] {
        for done in store
            .complete_batch(delivered_at(&claims, at(61)))
            .await
            .unwrap()
        {
            assert_eq!(done.outcome, outbox_core::TransitionOutcome::Applied);
        }
    }
    let later = store
        .claim_next(&claim_req("d", 10, at(600)))
        .await
        .unwrap();
    assert_eq!(claim_ids(&later), vec![written[2].id]);
}
