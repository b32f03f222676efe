//! Batch completion: one call, one outcome per claim, in input order.

use outbox_core::{
    Claim, Completion, CompletionRequest, EmissionResult, EntryId, TransitionOutcome,
    TransitionResult,
};

use crate::fixtures::*;

/// Builds five claims in five situations: held, forged token, terminal, missing row, and
/// released then taken by another worker.
async fn mixed_claims(store: &DynStore, owner: &str) -> Vec<Claim> {
    let claims = store
        .claim_pending(&claim_req(owner, 5, t0()))
        .await
        .unwrap();
    assert_eq!(claims.len(), 5);
    let held = claims[0].clone();
    let stale = Claim {
        token: uuid::Uuid::new_v4(),
        ..claims[1].clone()
    };
    store
        .mark_delivered(&claims[2], EmissionResult::new())
        .await
        .unwrap();
    let terminal = claims[2].clone();
    let mut missing = claims[3].clone();
    std::sync::Arc::make_mut(&mut missing.entry).id = EntryId::new();
    let reclaimed = claims[4].clone();
    store.release(&reclaimed, None).await.unwrap();
    // Everything else of this group is held or terminal, so the rescuer takes exactly it.
    let rescued = store
        .claim_pending(&claim_req("rescuer", 1, t0()))
        .await
        .unwrap();
    assert_eq!(claim_ids(&rescued), vec![reclaimed.id()]);
    vec![held, stale, terminal, missing, reclaimed]
}

fn completions(claims: &[Claim]) -> Vec<CompletionRequest> {
    let kinds = [
        Completion::Delivered(EmissionResult::new()),
        Completion::Failed {
            error: boom(),
            next_retry: Some(at(60)),
        },
        Completion::DeadLettered {
            error: boom(),
            reason: None,
        },
        Completion::Release { reason: None },
        Completion::Deferred {
            until: at(30),
            reason: None,
        },
    ];
    claims
        .iter()
        .zip(kinds)
        .map(|(c, k)| CompletionRequest::new(c.clone(), k).at(at(40)))
        .collect()
}

fn shape(results: &[TransitionResult]) -> Vec<(TransitionOutcome, outbox_core::EmissionStatus)> {
    results
        .iter()
        .map(|r| (r.outcome, r.entry.status))
        .collect()
}

/// The batch gives, claim by claim, the outcomes completing each alone gives.
pub async fn batch_matches_one_by_one(store: DynStore) {
    seed(&store, 10).await;
    let one = mixed_claims(&store, "one").await;
    let many = mixed_claims(&store, "many").await;
    let mut single = Vec::new();
    for req in completions(&one) {
        single.push(store.complete(req).await.unwrap());
    }
    let batched = store.complete_batch(completions(&many)).await.unwrap();
    assert_eq!(shape(&batched), shape(&single));
    assert_eq!(
        shape(&single),
        vec![
            (
                TransitionOutcome::Applied,
                outbox_core::EmissionStatus::Delivered
            ),
            (
                TransitionOutcome::StaleClaim,
                outbox_core::EmissionStatus::Pending
            ),
            (
                TransitionOutcome::Terminal,
                outbox_core::EmissionStatus::Delivered
            ),
            (
                TransitionOutcome::Missing,
                outbox_core::EmissionStatus::Pending
            ),
            (
                TransitionOutcome::StaleClaim,
                outbox_core::EmissionStatus::Pending
            ),
        ]
    );
    for (r, c) in batched.iter().zip(&many) {
        assert_eq!(r.entry.id, c.id(), "batch results out of input order");
        if r.outcome != TransitionOutcome::Missing {
            assert_eq!(r.entry, durable(&store, c.id()).await);
        }
    }
}

/// Results come back in the order of the requests, not the order of the rows.
pub async fn batch_results_follow_input_order(store: DynStore) {
    seed(&store, 4).await;
    let mut claims = store.claim_pending(&claim_req("w", 4, t0())).await.unwrap();
    claims.reverse();
    let reqs = claims
        .iter()
        .map(|c| CompletionRequest::new(c.clone(), Completion::Delivered(EmissionResult::new())))
        .collect();
    let results = store.complete_batch(reqs).await.unwrap();
    assert_eq!(ids(results.iter().map(|r| &r.entry)), claim_ids(&claims));
    assert!(results.iter().all(TransitionResult::is_applied));
}

/// One claim twice in one batch is refused, and nothing in the batch is written.
pub async fn batch_with_a_claim_twice_is_refused(store: DynStore) {
    seed(&store, 2).await;
    let claims = store.claim_pending(&claim_req("w", 2, t0())).await.unwrap();
    let reqs = vec![
        CompletionRequest::new(
            claims[0].clone(),
            Completion::Delivered(EmissionResult::new()),
        ),
        CompletionRequest::new(
            claims[1].clone(),
            Completion::Delivered(EmissionResult::new()),
        ),
        CompletionRequest::new(claims[0].clone(), Completion::Release { reason: None }),
    ];
    let err = store.complete_batch(reqs).await.unwrap_err();
    assert!(err.is_invalid_input(), "{err}");
    for c in &claims {
        assert_eq!(durable(&store, c.id()).await, *c.entry);
    }
}
