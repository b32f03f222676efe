//! What each completion writes, and that every one clears the claim.

use outbox_core::{Completion, CompletionRequest, EmissionStatus, TransitionOutcome};

use crate::fixtures::*;

/// Delivered: terminal, one attempt counted, claim fields cleared.
pub async fn delivered_clears_the_claim(store: DynStore) {
    seed(&store, 1).await;
    let claim = claim_one(&store, "w", t0()).await;
    let done = store
        .complete(
            CompletionRequest::new(claim, Completion::Delivered(Default::default())).at(at(2)),
        )
        .await
        .unwrap();
    assert_outcome(&done, TransitionOutcome::Applied, EmissionStatus::Delivered);
    assert_unclaimed(&done.entry);
    assert_eq!(done.entry.updated_at, at(2));
    assert_eq!(
        done.entry.claim_attempt_count, 1,
        "the claim counter is history, not claim state"
    );
}

/// Failed with a retry time: a retryable failure, claimable by the retry claim at that time.
pub async fn failed_with_retry_becomes_retryable(store: DynStore) {
    seed(&store, 1).await;
    let claim = claim_one(&store, "w", t0()).await;
    let done = store
        .mark_failed(&claim, boom(), Some(at(90)))
        .await
        .unwrap();
    assert_outcome(
        &done,
        TransitionOutcome::Applied,
        EmissionStatus::RetryableFailure,
    );
    assert_unclaimed(&done.entry);
    assert_eq!(done.entry.next_retry_at, Some(at(90)));
    assert_eq!(done.entry.attempt_count, 1);
    assert_eq!(done.entry.last_error.as_deref(), Some("provider said no"));
    let retried = store
        .claim_retry_ready(&claim_req("w", 1, at(90)))
        .await
        .unwrap();
    assert_eq!(claim_ids(&retried), vec![claim.id()]);
    assert_eq!(retried[0].acquisition, 2);
}

/// Failed without a retry time: failed, waiting for an operator.
pub async fn failed_without_retry_becomes_failed(store: DynStore) {
    seed(&store, 1).await;
    let claim = claim_one(&store, "w", t0()).await;
    let done = store.mark_failed(&claim, boom(), None).await.unwrap();
    assert_outcome(&done, TransitionOutcome::Applied, EmissionStatus::Failed);
    assert_unclaimed(&done.entry);
    assert_eq!(done.entry.next_retry_at, None);
}

/// Dead-lettered: terminal, with its reason and the error recorded.
pub async fn dead_letter_records_the_reason(store: DynStore) {
    seed(&store, 1).await;
    let claim = claim_one(&store, "w", t0()).await;
    let done = store
        .mark_dead_lettered(&claim, boom(), Some("too many attempts".into()))
        .await
        .unwrap();
    assert_outcome(
        &done,
        TransitionOutcome::Applied,
        EmissionStatus::DeadLettered,
    );
    assert_unclaimed(&done.entry);
    assert_eq!(
        done.entry.dead_letter_reason.as_deref(),
        Some("too many attempts")
    );
    assert_eq!(done.entry.last_error.as_deref(), Some("provider said no"));
}

/// Deferred: retry-ready at the given time, no attempt counted.
pub async fn deferred_sets_retry_time_without_counting(store: DynStore) {
    seed(&store, 1).await;
    let claim = claim_one(&store, "w", t0()).await;
    let done = store
        .complete(CompletionRequest::new(
            claim,
            Completion::Deferred {
                until: at(45),
                reason: Some("429".into()),
            },
        ))
        .await
        .unwrap();
    assert_outcome(&done, TransitionOutcome::Applied, EmissionStatus::Deferred);
    assert_unclaimed(&done.entry);
    assert_eq!(done.entry.next_retry_at, Some(at(45)));
    assert_eq!(done.entry.attempt_count, 0);
}

/// Saving a claimed entry writes its outcome fields, never its payload or topic.
pub async fn save_claim_writes_outcome_fields_only(store: DynStore) {
    seed(&store, 1).await;
    let claim = claim_one(&store, "w", t0()).await;
    let mut edited = (*claim.entry).clone();
    edited.status = EmissionStatus::RetryableFailure;
    edited.next_retry_at = Some(at(600));
    edited.attempt_count = 7;
    edited.last_error = Some("edited".into());
    edited.payload = b"tampered".to_vec();
    edited.topic = "elsewhere".into();
    let done = store.save_claim(&claim, edited).await.unwrap();
    assert_outcome(
        &done,
        TransitionOutcome::Applied,
        EmissionStatus::RetryableFailure,
    );
    assert_unclaimed(&done.entry);
    assert_eq!(done.entry.attempt_count, 7);
    assert_eq!(done.entry.next_retry_at, Some(at(600)));
    assert_eq!(done.entry.payload, claim.entry.payload);
    assert_eq!(done.entry.topic, claim.entry.topic);
    assert_eq!(durable(&store, claim.id()).await, done.entry);
}

/// Decision: a lease that ran out but was not reclaimed is still its holder's. The token
/// still matches, so completing it is applied (emitting again would only add a duplicate).
pub async fn expired_unreclaimed_claim_may_still_complete(store: DynStore) {
    seed(&store, 1).await;
    let claim = claim_one(&store, "w", t0()).await;
    let late = store
        .complete(
            CompletionRequest::new(claim.clone(), Completion::Delivered(Default::default()))
                .at(claim.expires_at + lease()),
        )
        .await
        .unwrap();
    assert_outcome(&late, TransitionOutcome::Applied, EmissionStatus::Delivered);
}
