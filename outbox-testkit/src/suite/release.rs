//! Giving a lease back.

use outbox_core::{Completion, CompletionRequest, EmissionStatus, TransitionOutcome};

use crate::fixtures::*;

/// A released pending row is claimable again at once, with no delivery attempt counted.
pub async fn release_returns_row_without_counting_an_attempt(store: DynStore) {
    seed(&store, 1).await;
    let claim = claim_one(&store, "w", t0()).await;
    let released = store
        .release(&claim, Some("shutting down".into()))
        .await
        .unwrap();
    assert_outcome(
        &released,
        TransitionOutcome::Applied,
        EmissionStatus::Pending,
    );
    assert_unclaimed(&released.entry);
    assert_eq!(released.entry.attempt_count, 0);
    let again = claim_one(&store, "other", t0()).await;
    assert_eq!(again.id(), claim.id());
}

/// A released retryable row keeps its status and retry time.
pub async fn release_keeps_retry_state(store: DynStore) {
    seed(&store, 1).await;
    let claim = claim_one(&store, "w", t0()).await;
    store
        .mark_failed(&claim, boom(), Some(at(10)))
        .await
        .unwrap();
    let retry = store
        .claim_retry_ready(&claim_req("w", 1, at(10)))
        .await
        .unwrap()
        .remove(0);
    let released = store
        .complete(CompletionRequest::new(retry, Completion::Release { reason: None }).at(at(11)))
        .await
        .unwrap();
    assert_outcome(
        &released,
        TransitionOutcome::Applied,
        EmissionStatus::RetryableFailure,
    );
    assert_eq!(released.entry.next_retry_at, Some(at(10)));
    assert_eq!(released.entry.attempt_count, 1);
    assert_eq!(
        claim_ids(
            &store
                .claim_retry_ready(&claim_req("x", 1, at(11)))
                .await
                .unwrap()
        ),
        vec![claim.id()]
    );
}

/// Releasing a claim that was already released is stale and changes nothing.
pub async fn release_twice_is_stale(store: DynStore) {
    seed(&store, 1).await;
    let claim = claim_one(&store, "w", t0()).await;
    let first = store.release(&claim, None).await.unwrap();
    let second = store.release(&claim, None).await.unwrap();
    assert_outcome(
        &second,
        TransitionOutcome::StaleClaim,
        EmissionStatus::Pending,
    );
    assert_eq!(second.entry, first.entry);
}
