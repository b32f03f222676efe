//! The server kills the store's connection in the middle of a claim: the claim fails
//! with a connection error, nothing stays claimed, and the store's next call works on a
//! fresh connection.

use std::time::Duration;

use chrono::TimeDelta;
use outbox_core::{ClaimRequest, ClaimStore, NewEntry, OutboxError, OutboxStore};

use crate::support::{blocked_session, lock_table, run, spawn_claim, SqlServerTestDb};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_whose_connection_is_killed_claims_nothing() {
    let Some(db) = SqlServerTestDb::create().await else {
        return;
    };
    let store = db.store(2).await;
    let entries: Vec<_> = (0..5).map(|i| NewEntry::new("t", vec![i])).collect();
    store.enqueue_batch(entries).await.unwrap();

    // A table lock READPAST cannot skip holds the claim mid-statement.
    let mut blocker = lock_table(&db).await;
    let claiming = spawn_claim(&store, 5);
    let mut observer = db.client().await;
    let victim = blocked_session(&mut observer, &db.schema, Duration::from_secs(10)).await;
    run(&mut observer, &format!("KILL {victim}")).await;
    run(&mut blocker, "ROLLBACK TRANSACTION").await;

    let result = claiming.await.unwrap();
    assert!(
        matches!(result, Err(OutboxError::Connection { .. })),
        "{result:?}"
    );
    let pending = store
        .find_pending(&outbox_core::FindRequest::new(10))
        .await
        .unwrap();
    assert_eq!(pending.len(), 5);
    assert!(
        pending.iter().all(|e| e.claim_owner.is_none()),
        "the killed claim left rows claimed"
    );
    let claims = store
        .claim_pending(&ClaimRequest::new("w", 5, TimeDelta::minutes(5)))
        .await
        .expect("the store recovers on a fresh connection");
    assert_eq!(claims.len(), 5);
}
