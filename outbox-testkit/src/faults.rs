//! Faults every store meets the same way, written once and run by each backend's tests.

use outbox_core::{
    Completion, CompletionRequest, EmissionResult, EmissionStatus, TransitionOutcome,
};

use crate::fixtures::{claim_req, seed, DynStore};

/// A worker whose leases ran out and were reclaimed completes late: its stale claims
/// change nothing, its still-held ones apply.
pub async fn a_stale_worker_changes_nothing_it_no_longer_holds(store: DynStore) {
    seed(&store, 10).await;
    let slow = store
        .claim_pending(&claim_req("slow", 10, crate::fixtures::t0()))
        .await
        .unwrap();
    let expiry = slow[0].expires_at;
    let rescued = store
        .claim_pending(&claim_req("rescuer", 5, expiry))
        .await
        .unwrap();
    assert_eq!(rescued.len(), 5);
    let late = store
        .complete_batch(
            slow.iter()
                .map(|c| {
                    CompletionRequest::new(c.clone(), Completion::Delivered(EmissionResult::new()))
                })
                .collect(),
        )
        .await
        .unwrap();
    for (i, r) in late.iter().enumerate() {
        if let Some(rescue) = rescued.iter().find(|c| c.id() == r.entry.id) {
            assert_eq!(r.outcome, TransitionOutcome::StaleClaim, "entry {i}");
            assert_eq!(
                r.entry, *rescue.entry,
                "the stale result is not the durable row"
            );
            let row = store.get(rescue.id()).await.unwrap().unwrap();
            assert_eq!(row, *rescue.entry, "a stale completion wrote");
        } else {
            assert_eq!(r.outcome, TransitionOutcome::Applied, "entry {i}");
            assert_eq!(r.entry.status, EmissionStatus::Delivered);
        }
    }
    for c in &rescued {
        let won = store
            .mark_delivered(c, EmissionResult::new())
            .await
            .unwrap();
        assert!(won.is_applied());
    }
}

/// Asserts that `call` failed as a broken connection whose message names the deadline,
/// after about `deadline`: not refused at once, not left waiting.
pub async fn fails_within_the_deadline<T: std::fmt::Debug>(
    what: &str,
    deadline: std::time::Duration,
    call: impl std::future::Future<Output = outbox_core::Result<T>>,
) {
    let started = std::time::Instant::now();
    let result = call.await;
    let took = started.elapsed();
    match result {
        Err(outbox_core::OutboxError::Connection { message, .. }) => {
            assert!(message.contains("deadline"), "{what}: {message}")
        }
        other => panic!("{what} past its deadline gave {other:?}"),
    }
    assert!(
        took + std::time::Duration::from_millis(50) >= deadline && took < deadline * 4,
        "{what} failed after {took:?}, its deadline being {deadline:?}"
    );
}
