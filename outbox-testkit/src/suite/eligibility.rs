//! Which rows a claim may take, and what an acquisition writes.

use std::collections::HashSet;

use chrono::TimeDelta;
use outbox_core::{Completion, CompletionRequest, EmissionResult, NewEntry};

use crate::fixtures::*;

/// Delivered and dead-lettered rows are never claimed, by either claim.
pub async fn terminal_rows_are_never_claimed(store: DynStore) {
    seed(&store, 2).await;
    let claims = store.claim_pending(&claim_req("w", 2, t0())).await.unwrap();
    store
        .mark_delivered(&claims[0], EmissionResult::new())
        .await
        .unwrap();
    store
        .mark_dead_lettered(&claims[1], boom(), None)
        .await
        .unwrap();
    let later = at(3600);
    assert!(store
        .claim_pending(&claim_req("w", 10, later))
        .await
        .unwrap()
        .is_empty());
    assert!(store
        .claim_retry_ready(&claim_req("w", 10, later))
        .await
        .unwrap()
        .is_empty());
}

/// A failed row without a retry time waits for an operator: no claim takes it.
pub async fn failed_rows_wait_for_an_operator(store: DynStore) {
    seed(&store, 1).await;
    let claim = claim_one(&store, "w", t0()).await;
    store.mark_failed(&claim, boom(), None).await.unwrap();
    let later = at(86_400);
    assert!(store
        .claim_pending(&claim_req("w", 10, later))
        .await
        .unwrap()
        .is_empty());
    assert!(store
        .claim_retry_ready(&claim_req("w", 10, later))
        .await
        .unwrap()
        .is_empty());
}

/// A pending row with a future not-before time is claimable only once that time comes.
pub async fn pending_not_yet_due_is_not_claimed(store: DynStore) {
    let entry = store
        .enqueue(
            NewEntry::new("t", b"x".to_vec())
                .created_at(at(-10))
                .not_before(at(60)),
        )
        .await
        .unwrap();
    assert!(store
        .claim_pending(&claim_req("w", 10, at(59)))
        .await
        .unwrap()
        .is_empty());
    let claims = store
        .claim_pending(&claim_req("w", 10, at(60)))
        .await
        .unwrap();
    assert_eq!(claim_ids(&claims), vec![entry.id]);
}

/// A deferred row is claimable by the retry claim only once its retry time comes, and
/// never by the pending claim.
pub async fn retry_not_yet_due_is_not_claimed(store: DynStore) {
    seed(&store, 1).await;
    let claim = claim_one(&store, "w", t0()).await;
    store
        .complete(
            CompletionRequest::new(
                claim.clone(),
                Completion::Deferred {
                    until: at(120),
                    reason: None,
                },
            )
            .at(at(1)),
        )
        .await
        .unwrap();
    assert!(store
        .claim_retry_ready(&claim_req("w", 10, at(119)))
        .await
        .unwrap()
        .is_empty());
    assert!(store
        .claim_pending(&claim_req("w", 10, at(500)))
        .await
        .unwrap()
        .is_empty());
    let retried = store
        .claim_retry_ready(&claim_req("w", 10, at(120)))
        .await
        .unwrap();
    assert_eq!(claim_ids(&retried), vec![claim.id()]);
}

/// A row under an unexpired lease is not claimed again, by anyone.
pub async fn held_lease_is_not_claimed_again(store: DynStore) {
    seed(&store, 1).await;
    claim_one(&store, "a", t0()).await;
    let just_before_expiry = t0() + lease() - TimeDelta::microseconds(1);
    for owner in ["a", "b"] {
        let again = store
            .claim_pending(&claim_req(owner, 10, just_before_expiry))
            .await
            .unwrap();
        assert!(again.is_empty(), "{owner} claimed a held row");
    }
}

/// Once a lease runs out the row is claimable again, and the reclaim is counted.
pub async fn expired_lease_is_reclaimable(store: DynStore) {
    seed(&store, 1).await;
    let first = claim_one(&store, "a", t0()).await;
    let second = claim_one(&store, "b", first.expires_at).await;
    assert_eq!(second.id(), first.id());
    assert_eq!(second.owner, "b");
    assert_eq!(second.acquisition, 2);
    assert_eq!(
        durable(&store, first.id()).await.claim_owner.as_deref(),
        Some("b")
    );
}

/// Each acquisition increments the claim attempt count exactly once.
pub async fn attempt_count_increments_once_per_acquisition(store: DynStore) {
    let written = seed(&store, 3).await;
    let claims = store.claim_pending(&claim_req("w", 3, t0())).await.unwrap();
    assert!(claims.iter().all(|c| c.acquisition == 1));
    for e in &written {
        assert_eq!(durable(&store, e.id).await.claim_attempt_count, 1);
    }
    let claim = claims[0].clone();
    store.release(&claim, None).await.unwrap();
    let again = claim_one(&store, "w", at(1)).await;
    assert_eq!((again.id(), again.acquisition), (claim.id(), 2));
    assert_eq!(durable(&store, claim.id()).await.claim_attempt_count, 2);
}

/// Tokens are fresh for every acquisition, including a reclaim by the same owner name,
/// and the earlier token stops working.
pub async fn tokens_are_unique_per_acquisition(store: DynStore) {
    seed(&store, 20).await;
    let claims = store
        .claim_pending(&claim_req("w", 20, t0()))
        .await
        .unwrap();
    let tokens: HashSet<_> = claims.iter().map(|c| c.token).collect();
    assert_eq!(tokens.len(), 20, "tokens repeat within a batch");
    let old = claims[0].clone();
    let reclaimed = store
        .claim_pending(&claim_req("w", 1, old.expires_at))
        .await
        .unwrap()
        .remove(0);
    assert_eq!(reclaimed.id(), old.id());
    assert!(
        !tokens.contains(&reclaimed.token),
        "a reclaim reused a token"
    );
    let stale = store
        .mark_delivered(&old, EmissionResult::new())
        .await
        .unwrap();
    assert_eq!(stale.outcome, outbox_core::TransitionOutcome::StaleClaim);
}

/// A claim for more rows than are eligible returns only the rows it acquired.
pub async fn claim_returns_only_rows_acquired(store: DynStore) {
    let written = seed(&store, 3).await;
    claim_one(&store, "a", t0()).await;
    let claims = store
        .claim_pending(&claim_req("b", 10, t0()))
        .await
        .unwrap();
    assert_eq!(claim_ids(&claims), ids(&written[1..3]));
    assert!(claims.iter().all(|c| c.owner == "b"));
}

/// A topic filter claims only that topic's rows.
pub async fn topic_filter_claims_only_that_topic(store: DynStore) {
    let a = store
        .enqueue(NewEntry::new("orders", b"1".to_vec()).created_at(at(-2)))
        .await
        .unwrap();
    store
        .enqueue(NewEntry::new("users", b"2".to_vec()).created_at(at(-1)))
        .await
        .unwrap();
    let claims = store
        .claim_pending(&claim_req("w", 10, t0()).topic("orders"))
        .await
        .unwrap();
    assert_eq!(claim_ids(&claims), vec![a.id]);
}

/// What a claim persists equals what it returns, and the claim replaces the stamp.
pub async fn persisted_claim_fields_equal_returned(store: DynStore) {
    let written = seed(&store, 5).await;
    let claims = store.claim_pending(&claim_req("w", 5, t0())).await.unwrap();
    for (claim, before) in claims.iter().zip(&written) {
        let row = durable(&store, claim.id()).await;
        assert_eq!(row, *claim.entry, "returned snapshot differs from the row");
        assert_eq!(row.claim_owner.as_deref(), Some("w"));
        assert_eq!(row.claim_token, Some(claim.token));
        assert_eq!(row.claimed_at, Some(t0()));
        assert_eq!(claim.claimed_at, t0());
        assert_eq!(row.claim_expires_at, Some(t0() + lease()));
        assert_eq!(claim.expires_at, t0() + lease());
        assert_ne!(row.stamp, before.stamp, "a claim must replace the stamp");
        assert_eq!(row.status, outbox_core::EmissionStatus::Pending);
    }
}
