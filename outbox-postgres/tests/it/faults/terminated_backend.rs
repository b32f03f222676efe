//! The store's server process is terminated while its statement waits on a lock: the
//! call fails with a connection error, nothing is half-applied, and the next call gets a
//! fresh connection.

use std::sync::Arc;
use std::time::Duration;

use chrono::TimeDelta;
use outbox_core::{
    ClaimRequest, ClaimStore, EmissionResult, EmissionStatus, NewEntry, OutboxError, OutboxStore,
};

use crate::support;

const WITHIN: Duration = Duration::from_secs(10);

async fn terminate(observer: &tokio_postgres::Client, pid: i32) {
    let done: bool = observer
        .query_one("SELECT pg_terminate_backend($1)", &[&pid])
        .await
        .unwrap()
        .get(0);
    assert!(done, "backend {pid} was not terminated");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_whose_backend_is_terminated_applies_nothing() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let store = Arc::new(support::store(&db, 1).await);
    let written = store
        .enqueue_batch((0..5u8).map(|i| NewEntry::new("t", vec![i])).collect())
        .await
        .unwrap();
    let observer = db.connect().await;
    let mut locker = db.connect().await;
    let tx = locker.transaction().await.unwrap();
    tx.batch_execute(&support::table(&db).render("LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE"))
        .await
        .unwrap();
    let request = ClaimRequest::new("w", 10, TimeDelta::seconds(30));
    let claim = {
        let (store, request) = (store.clone(), request.clone());
        tokio::spawn(async move { store.claim_pending(&request).await })
    };
    let pid = support::blocked_backend(&observer, &db.schema, WITHIN).await;
    terminate(&observer, pid).await;
    let err = claim.await.unwrap().unwrap_err();
    assert!(matches!(err, OutboxError::Connection { .. }), "{err}");
    tx.rollback().await.unwrap();
    for e in &written {
        let row = store.get(e.id).await.unwrap().unwrap();
        assert_eq!(
            (row.claim_owner, row.claim_attempt_count),
            (None, 0),
            "half a claim"
        );
    }
    let claims = store.claim_pending(&request).await.unwrap();
    assert_eq!(claims.len(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_completion_whose_backend_is_terminated_applies_nothing() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let store = Arc::new(support::store(&db, 1).await);
    store
        .enqueue_batch((0..3u8).map(|i| NewEntry::new("t", vec![i])).collect())
        .await
        .unwrap();
    let claims = store
        .claim_pending(&ClaimRequest::new("w", 3, TimeDelta::seconds(30)))
        .await
        .unwrap();
    let observer = db.connect().await;
    let mut locker = db.connect().await;
    let tx = locker.transaction().await.unwrap();
    // Hold the last row, so the batch locks the others and then waits.
    let last = claims.iter().map(|c| c.id()).max().unwrap();
    tx.execute(
        &support::table(&db).render("SELECT 1 FROM {table} WHERE id = $1 FOR UPDATE"),
        &[&last.as_uuid()],
    )
    .await
    .unwrap();
    let completion = {
        let (store, claims) = (store.clone(), claims.clone());
        tokio::spawn(async move {
            let reqs = claims
                .iter()
                .map(|c| {
                    outbox_core::CompletionRequest::new(
                        c.clone(),
                        outbox_core::Completion::Delivered(EmissionResult::new()),
                    )
                })
                .collect();
            store.complete_batch(reqs).await
        })
    };
    let pid = support::blocked_backend(&observer, &db.schema, WITHIN).await;
    terminate(&observer, pid).await;
    let err = completion.await.unwrap().unwrap_err();
    assert!(matches!(err, OutboxError::Connection { .. }), "{err}");
    tx.rollback().await.unwrap();
    for c in &claims {
        let row = store.get(c.id()).await.unwrap().unwrap();
        assert_eq!(row, *c.entry, "half a completion");
    }
    for c in &claims {
        let done = store
            .mark_delivered(c, EmissionResult::new())
            .await
            .unwrap();
        assert!(done.is_applied());
        assert_eq!(done.entry.status, EmissionStatus::Delivered);
    }
}
