//! `ConcurrencyLost`: another writer wins between a completion's check and its write.

use std::sync::Arc;

use outbox_core::{
    Claim, Completion, CompletionRequest, EmissionResult, EmissionStatus, TransitionOutcome,
};

use crate::fixtures::*;
use crate::Subject;

async fn reclaim_once(store: &DynStore, claim: &Claim) -> Vec<Claim> {
    store
        .claim_pending(&claim_req("rescuer", 1, claim.expires_at))
        .await
        .unwrap()
}

/// Another writer wins between the check and the write of a completion.
///
/// Where the store checks and writes in separate steps, the suite runs a reclaim in that
/// gap and the completion must report `ConcurrencyLost` with the reclaimed row. Where
/// the store declares the two atomic, the gap does not exist: the completion and the
/// reclaim race many times and exactly one of them wins each time, never both.
pub async fn concurrency_lost_to_a_reclaim(subject: Subject) {
    let store = subject.store.clone();
    if store.capabilities().atomic_completion {
        assert_atomic_against_reclaims(&store).await;
        return;
    }
    let hook = subject
        .interleave
        .expect("a store without atomic completion must give the suite an interleave hook");
    seed(&store, 1).await;
    let claim = claim_one(&store, "a", t0()).await;
    let rescuer_store = store.clone();
    let held = claim.clone();
    hook.before_next_write(Box::pin(async move {
        assert_eq!(reclaim_once(&rescuer_store, &held).await.len(), 1);
    }));
    let late = store
        .complete(
            CompletionRequest::new(claim.clone(), Completion::Delivered(EmissionResult::new()))
                .at(claim.expires_at),
        )
        .await
        .unwrap();
    assert_outcome(
        &late,
        TransitionOutcome::ConcurrencyLost,
        EmissionStatus::Pending,
    );
    assert_eq!(late.entry.claim_owner.as_deref(), Some("rescuer"));
    assert_eq!(durable(&store, claim.id()).await, late.entry);
}

/// A winner that made the row terminal between check and write is reported as
/// `ConcurrencyLost` (never as `Applied`), with the terminal entry.
pub async fn concurrency_lost_to_a_terminal_winner(subject: Subject) {
    let store = subject.store.clone();
    if store.capabilities().atomic_completion {
        assert_atomic_against_reclaims(&store).await;
        return;
    }
    let hook = subject
        .interleave
        .expect("a store without atomic completion must give the suite an interleave hook");
    seed(&store, 1).await;
    let claim = claim_one(&store, "a", t0()).await;
    let winner_store = store.clone();
    let id = claim.id();
    hook.before_next_write(Box::pin(async move {
        let mut row = winner_store.get(id).await.unwrap().unwrap();
        row.status = EmissionStatus::DeadLettered;
        row.dead_letter_reason = Some("operator".into());
        let saved = winner_store.save(&row, Some(at(1))).await.unwrap();
        assert!(saved.is_applied());
    }));
    let late = store
        .mark_delivered(&claim, EmissionResult::new())
        .await
        .unwrap();
    assert_outcome(
        &late,
        TransitionOutcome::ConcurrencyLost,
        EmissionStatus::DeadLettered,
    );
}

async fn assert_atomic_against_reclaims(store: &DynStore) {
    const ROUNDS: u32 = 50;
    let written = seed(store, ROUNDS as usize).await;
    let claims = store
        .claim_pending(&claim_req("a", ROUNDS, t0()))
        .await
        .unwrap();
    assert_eq!(claims.len(), written.len());
    let mut tasks = Vec::new();
    for claim in claims {
        let (s1, s2) = (Arc::clone(store), Arc::clone(store));
        let c1 = claim.clone();
        let complete = tokio::spawn(async move {
            s1.complete(
                CompletionRequest::new(c1.clone(), Completion::Delivered(EmissionResult::new()))
                    .at(c1.expires_at),
            )
            .await
            .unwrap()
        });
        let rescue = tokio::spawn(async move { reclaim_once(&s2, &claim).await });
        tasks.push((complete, rescue));
    }
    let mut rescued_total = 0;
    for (complete, rescue) in tasks {
        let done = complete.await.unwrap();
        let rescued = rescue.await.unwrap();
        rescued_total += rescued.len();
        assert_ne!(
            done.outcome,
            TransitionOutcome::ConcurrencyLost,
            "atomic store reported a lost race"
        );
        match done.outcome {
            TransitionOutcome::Applied => {}
            TransitionOutcome::StaleClaim => {
                // Only a reclaim can have made it stale, and that reclaim still holds it.
                let row = durable(store, done.entry.id).await;
                assert_eq!(
                    row.claim_owner.as_deref(),
                    Some("rescuer"),
                    "stale without a rescuer"
                );
            }
            other => panic!("unexpected outcome {other:?}"),
        }
    }
    // Every row is either delivered (and unclaimed) or held by the rescuer, never both.
    let mut held_by_rescuer = 0;
    for e in &written {
        let row = durable(store, e.id).await;
        if row.status == EmissionStatus::Delivered {
            assert_eq!(row.claim_owner, None);
        } else {
            assert_eq!(row.claim_owner.as_deref(), Some("rescuer"));
            held_by_rescuer += 1;
        }
    }
    assert_eq!(rescued_total, held_by_rescuer);
}
