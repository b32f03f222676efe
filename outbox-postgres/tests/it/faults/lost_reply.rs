//! A batch completion commits but its reply never reaches the store (the connection
//! breaks in between). The store reports the broken connection; sending the same requests
//! again recognises the write as its own and reports it applied, writing nothing twice,
//! while a new request for the same claims is judged afresh.

use chrono::TimeDelta;
use outbox_core::{
    ClaimRequest, ClaimStore, Completion, CompletionRequest, EmissionResult, EmissionStatus,
    NewEntry, OutboxError, OutboxStore, TransitionOutcome,
};

use crate::support;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_completion_retried_after_its_reply_was_lost_is_applied_once() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let (proxy, store) = support::proxied_store(&db).await;
    store
        .enqueue_batch((0..4u8).map(|i| NewEntry::new("t", vec![i])).collect())
        .await
        .unwrap();
    // Complete one entry first, so the completion statement is already prepared on the
    // connection and the reply lost below is the execution's, not the preparation's.
    let warm = store
        .claim_pending(&ClaimRequest::new("w", 1, TimeDelta::seconds(30)))
        .await
        .unwrap();
    store
        .mark_delivered(&warm[0], EmissionResult::new())
        .await
        .unwrap();
    let claims = store
        .claim_pending(&ClaimRequest::new("w", 3, TimeDelta::seconds(30)))
        .await
        .unwrap();
    assert_eq!(claims.len(), 3);
    let requests: Vec<CompletionRequest> = claims
        .iter()
        .map(|c| {
            CompletionRequest::new(
                c.clone(),
                Completion::Delivered(EmissionResult::new().provider_message_id("m")),
            )
        })
        .collect();

    proxy.lose_next_reply();
    let err = store.complete_batch(requests.clone()).await.unwrap_err();
    assert!(!proxy.reply_loss_pending(), "no reply was lost");
    assert!(matches!(err, OutboxError::Connection { .. }), "{err}");

    // The server did the work: every row is delivered, carrying the request's stamp.
    let mut written = Vec::new();
    for req in &requests {
        let row = store.get(req.claim.id()).await.unwrap().unwrap();
        assert_eq!(
            row.status,
            EmissionStatus::Delivered,
            "the lost write did not commit"
        );
        assert_eq!(row.stamp, req.stamp);
        written.push(row);
    }

    let retried = store.complete_batch(requests.clone()).await.unwrap();
    for (result, row) in retried.iter().zip(&written) {
        assert_eq!(
            result.outcome,
            TransitionOutcome::Applied,
            "{:?}",
            result.entry.id
        );
        assert_eq!(&result.entry, row);
        assert_eq!(
            &store.get(row.id).await.unwrap().unwrap(),
            row,
            "written twice"
        );
    }

    let fresh: Vec<CompletionRequest> = claims
        .iter()
        .map(|c| CompletionRequest::new(c.clone(), Completion::Release { reason: None }))
        .collect();
    for result in store.complete_batch(fresh).await.unwrap() {
        assert_eq!(result.outcome, TransitionOutcome::Terminal);
    }
}
