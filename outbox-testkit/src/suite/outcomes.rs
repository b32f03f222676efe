//! The five transition outcomes, each provoked for real.

use outbox_core::{
    Claim, Completion, CompletionRequest, EmissionResult, EmissionStatus, EntryId,
    TransitionOutcome,
};

use crate::fixtures::*;

/// A held claim's completion is applied and returns what it wrote.
pub async fn applied_returns_the_written_entry(store: DynStore) {
    seed(&store, 1).await;
    let claim = claim_one(&store, "w", t0()).await;
    let result = store
        .complete(
            CompletionRequest::new(
                claim.clone(),
                Completion::Delivered(EmissionResult::new().provider_message_id("m-1")),
            )
            .at(at(5)),
        )
        .await
        .unwrap();
    assert_outcome(
        &result,
        TransitionOutcome::Applied,
        EmissionStatus::Delivered,
    );
    assert_eq!(result.entry, durable(&store, claim.id()).await);
    assert_eq!(result.entry.delivered_at, Some(at(5)));
    assert_eq!(result.entry.provider_message_id.as_deref(), Some("m-1"));
    assert_eq!(result.entry.attempt_count, 1);
    assert_ne!(result.entry.stamp, claim.entry.stamp);
}

/// A completion with a token that was never issued is stale and writes nothing.
pub async fn wrong_token_is_stale(store: DynStore) {
    seed(&store, 1).await;
    let claim = claim_one(&store, "w", t0()).await;
    let before = durable(&store, claim.id()).await;
    let forged = Claim {
        token: uuid::Uuid::new_v4(),
        ..claim.clone()
    };
    let result = store
        .mark_delivered(&forged, EmissionResult::new())
        .await
        .unwrap();
    assert_outcome(
        &result,
        TransitionOutcome::StaleClaim,
        EmissionStatus::Pending,
    );
    assert_eq!(result.entry, before);
    assert_eq!(
        durable(&store, claim.id()).await,
        before,
        "a stale completion wrote"
    );
}

/// The right token under another owner's name is stale too.
pub async fn wrong_owner_is_stale(store: DynStore) {
    seed(&store, 1).await;
    let claim = claim_one(&store, "w", t0()).await;
    let impostor = Claim {
        owner: "someone-else".into(),
        ..claim.clone()
    };
    let result = store
        .mark_delivered(&impostor, EmissionResult::new())
        .await
        .unwrap();
    assert_outcome(
        &result,
        TransitionOutcome::StaleClaim,
        EmissionStatus::Pending,
    );
    assert_eq!(durable(&store, claim.id()).await, *claim.entry);
}

/// After another worker reclaimed an expired lease, the first holder's completion is stale
/// and the new holder's lease is untouched.
pub async fn stale_after_reclaim_by_another_worker(store: DynStore) {
    seed(&store, 1).await;
    let first = claim_one(&store, "a", t0()).await;
    let second = claim_one(&store, "b", first.expires_at).await;
    let late = store
        .mark_delivered(&first, EmissionResult::new())
        .await
        .unwrap();
    assert_outcome(
        &late,
        TransitionOutcome::StaleClaim,
        EmissionStatus::Pending,
    );
    assert_eq!(late.entry, *second.entry);
    assert_eq!(durable(&store, first.id()).await, *second.entry);
    let winner = store
        .mark_delivered(&second, EmissionResult::new())
        .await
        .unwrap();
    assert!(winner.is_applied());
}

/// A completion of a row that was already terminal is reported as terminal.
pub async fn terminal_before_the_write(store: DynStore) {
    seed(&store, 1).await;
    let claim = claim_one(&store, "w", t0()).await;
    let done = store
        .mark_dead_lettered(&claim, boom(), Some("poison".into()))
        .await
        .unwrap();
    assert!(done.is_applied());
    for completion in [
        Completion::Delivered(EmissionResult::new()),
        Completion::Release { reason: None },
        Completion::Failed {
            error: boom(),
            next_retry: Some(at(9)),
        },
    ] {
        let again = store
            .complete(CompletionRequest::new(claim.clone(), completion))
            .await
            .unwrap();
        assert_outcome(
            &again,
            TransitionOutcome::Terminal,
            EmissionStatus::DeadLettered,
        );
        assert_eq!(again.entry, done.entry, "terminal row was rewritten");
    }
}

/// A completion for a row that was never written reports missing and hands back the
/// caller's own snapshot.
pub async fn missing_row_never_written(store: DynStore) {
    seed(&store, 1).await;
    let mut claim = claim_one(&store, "w", t0()).await;
    std::sync::Arc::make_mut(&mut claim.entry).id = EntryId::new();
    let result = store
        .mark_delivered(&claim, EmissionResult::new())
        .await
        .unwrap();
    assert_eq!(result.outcome, TransitionOutcome::Missing);
    assert_eq!(result.entry, *claim.entry);
    assert!(
        store.get(claim.id()).await.unwrap().is_none(),
        "missing row was created"
    );
}

/// A row deleted after its claim (delivered, then pruned) reports missing to a late completion.
pub async fn missing_after_the_row_was_pruned(store: DynStore) {
    seed(&store, 1).await;
    let claim = claim_one(&store, "w", t0()).await;
    store
        .complete(
            CompletionRequest::new(claim.clone(), Completion::Delivered(EmissionResult::new()))
                .at(at(1)),
        )
        .await
        .unwrap();
    let pruned = store
        .prune_delivered(&outbox_core::PruneRequest {
            delivered_before: at(2),
            batch_size: 10,
        })
        .await
        .unwrap();
    assert_eq!(pruned, 1);
    let late = store.release(&claim, None).await.unwrap();
    assert_eq!(late.outcome, TransitionOutcome::Missing);
    assert_eq!(late.entry.id, claim.id());
}

/// A completion request sent again after its first attempt committed (the reply was lost)
/// is recognised by the stamp it wrote: applied, with nothing written twice. A new request
/// for the same claim is judged afresh.
pub async fn retried_request_recognises_its_own_write(store: DynStore) {
    seed(&store, 2).await;
    let claim = claim_one(&store, "w", t0()).await;
    let delivered = CompletionRequest::new(
        claim.clone(),
        Completion::Delivered(EmissionResult::new().provider_message_id("m-1")),
    )
    .at(at(5));
    let first = store.complete(delivered.clone()).await.unwrap();
    assert!(first.is_applied());
    assert_eq!(
        first.entry.stamp, delivered.stamp,
        "the write left another stamp"
    );
    let retried = store.complete(delivered.clone().at(at(6))).await.unwrap();
    assert_outcome(
        &retried,
        TransitionOutcome::Applied,
        EmissionStatus::Delivered,
    );
    assert_eq!(retried.entry, first.entry, "the retry wrote again");
    assert_eq!(durable(&store, claim.id()).await, first.entry);
    let fresh = store
        .complete(CompletionRequest::new(
            claim,
            Completion::Delivered(EmissionResult::new()),
        ))
        .await
        .unwrap();
    assert_eq!(fresh.outcome, TransitionOutcome::Terminal);

    // A non-terminal write, retried inside a batch.
    let claim = claim_one(&store, "w", at(10)).await;
    let failed = CompletionRequest::new(
        claim.clone(),
        Completion::Failed {
            error: boom(),
            next_retry: Some(at(20)),
        },
    )
    .at(at(11));
    assert!(store.complete(failed.clone()).await.unwrap().is_applied());
    let written = durable(&store, claim.id()).await;
    let again = store.complete_batch(vec![failed]).await.unwrap();
    assert_eq!(again.len(), 1);
    assert_outcome(
        &again[0],
        TransitionOutcome::Applied,
        EmissionStatus::RetryableFailure,
    );
    assert_eq!(
        durable(&store, claim.id()).await,
        written,
        "the retry wrote again"
    );
}

/// Once another worker has written over a completion, sending that completion again is
/// stale: the row no longer carries its stamp.
pub async fn retried_request_after_a_newer_write_is_stale(store: DynStore) {
    seed(&store, 1).await;
    let claim = claim_one(&store, "a", t0()).await;
    let failed = CompletionRequest::new(
        claim.clone(),
        Completion::Failed {
            error: boom(),
            next_retry: Some(at(2)),
        },
    )
    .at(at(1));
    assert!(store.complete(failed.clone()).await.unwrap().is_applied());
    let mut reclaimed = store
        .claim_retry_ready(&claim_req("b", 1, at(3)))
        .await
        .unwrap();
    assert_eq!(reclaimed.len(), 1, "the retryable row was not reclaimed");
    let next = reclaimed.remove(0);
    let late = store.complete(failed).await.unwrap();
    assert_outcome(
        &late,
        TransitionOutcome::StaleClaim,
        EmissionStatus::RetryableFailure,
    );
    assert_eq!(late.entry, *next.entry);
    assert_eq!(durable(&store, claim.id()).await, *next.entry);
}
