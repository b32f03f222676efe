//! A completion that meets a row another transaction is writing waits for that writer and
//! judges the row as the writer left it: a claim taken over while the completion waited
//! is reported stale, with the new holder's row, never applied and never missing; the
//! rest of the batch is written.

use std::time::Duration;

use chrono::TimeDelta;
use outbox_core::{
    ClaimRequest, ClaimStore, Completion, CompletionRequest, EmissionResult, EmissionStatus,
    NewEntry, OutboxStore, TransitionOutcome,
};
use uuid::Uuid;

use crate::support;

const WITHIN: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_taken_over_while_its_completion_waits_is_reported_stale() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let store = support::store(&db, 1).await;
    store
        .enqueue_batch((0..3u8).map(|i| NewEntry::new("t", vec![i])).collect())
        .await
        .unwrap();
    let claims = store
        .claim_pending(&ClaimRequest::new("a", 10, TimeDelta::seconds(30)))
        .await
        .unwrap();
    assert_eq!(claims.len(), 3);
    let taken = claims[1].id();

    // Another worker takes the middle row over (as a reclaim after the lease ran out
    // would), and has not committed yet when the completion reaches the row.
    let observer = db.connect().await;
    let mut other = db.connect().await;
    let tx = other.transaction().await.unwrap();
    let new_token = Uuid::new_v4();
    tx.execute(
        &support::table(&db).render(
            "UPDATE {table} SET claim_owner = 'b', claim_token = $2, stamp = gen_random_uuid() \
             WHERE id = $1",
        ),
        &[&taken.as_uuid(), &new_token],
    )
    .await
    .unwrap();

    let reqs: Vec<_> = claims
        .iter()
        .map(|c| CompletionRequest::new(c.clone(), Completion::Delivered(EmissionResult::new())))
        .collect();
    let completing = tokio::spawn({
        let store = store.clone();
        async move { store.complete_batch(reqs).await }
    });
    support::blocked_backend(&observer, &db.schema, WITHIN).await;
    tx.commit().await.unwrap();
    let results = completing.await.unwrap().unwrap();

    for (claim, result) in claims.iter().zip(&results) {
        if claim.id() == taken {
            assert_eq!(result.outcome, TransitionOutcome::StaleClaim, "{result:?}");
            assert_eq!(result.entry.claim_owner.as_deref(), Some("b"), "{result:?}");
            assert_eq!(result.entry.claim_token, Some(new_token), "{result:?}");
            assert_eq!(result.entry.status, EmissionStatus::Pending);
        } else {
            assert_eq!(result.outcome, TransitionOutcome::Applied, "{result:?}");
            assert_eq!(result.entry.status, EmissionStatus::Delivered);
        }
    }
    let row = store.get(taken).await.unwrap().unwrap();
    assert_eq!(
        row.status,
        EmissionStatus::Pending,
        "the stale holder wrote"
    );
    assert_eq!(row.claim_owner.as_deref(), Some("b"));
}
