//! Calls the server rolls back (lock timeout, deadlock victim) are run again, boundedly.

use std::time::{Duration, Instant};

use chrono::TimeDelta;
use outbox_core::ConflictRetry;
use outbox_core::{
    ClaimRequest, ClaimStore, Completion, CompletionRequest, EmissionResult, NewEntry, OutboxError,
    OutboxStore, TransitionOutcome,
};
use outbox_sqlserver::SqlServerStoreConfig;

use crate::support::{lock_table, run, spawn_claim, SqlServerTestDb};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_timeout_is_retried_until_the_lock_goes() {
    let Some(db) = SqlServerTestDb::create().await else {
        return;
    };
    let options = db
        .options
        .clone()
        .lock_timeout(Duration::from_millis(200))
        .unwrap();
    let store = db
        .store_with(options, 2, SqlServerStoreConfig::default())
        .await;
    store
        .enqueue(NewEntry::new("t", b"x".to_vec()))
        .await
        .unwrap();
    let mut blocker = lock_table(&db).await;
    let started = Instant::now();
    let claiming = spawn_claim(&store, 1);
    tokio::time::sleep(Duration::from_millis(500)).await;
    run(&mut blocker, "ROLLBACK TRANSACTION").await;
    let claims = claiming
        .await
        .unwrap()
        .expect("claimed after the lock went");
    assert_eq!(claims.len(), 1);
    assert!(started.elapsed() >= Duration::from_millis(400));
    assert!(store.retried_calls() >= 1, "no retry was counted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_held_past_every_retry_fails_as_a_conflict_with_error_1222() {
    let Some(db) = SqlServerTestDb::create().await else {
        return;
    };
    let options = db
        .options
        .clone()
        .lock_timeout(Duration::from_millis(50))
        .unwrap();
    let retry = ConflictRetry::new(3, Duration::from_millis(1), Duration::from_millis(5)).unwrap();
    let store = db
        .store_with(
            options,
            2,
            SqlServerStoreConfig {
                retry,
                ..Default::default()
            },
        )
        .await;
    store
        .enqueue(NewEntry::new("t", b"x".to_vec()))
        .await
        .unwrap();
    let mut blocker = lock_table(&db).await;
    let err = store
        .claim_pending(&ClaimRequest::new("w", 1, TimeDelta::minutes(5)))
        .await
        .unwrap_err();
    run(&mut blocker, "ROLLBACK TRANSACTION").await;
    assert!(matches!(err, OutboxError::Conflict { .. }), "{err:?}");
    let source = std::error::Error::source(&err).expect("the server error");
    let server = source
        .downcast_ref::<outbox_sqlserver::ServerError>()
        .expect("a ServerError");
    assert_eq!(server.number, outbox_sqlserver::numbers::LOCK_TIMEOUT);
    assert_eq!(store.retried_calls(), 2, "three tries in all");
}

/// The store's completion and a transaction of the test's lock two rows in opposite
/// orders; the test's session has the higher deadlock priority, so the store's batch is
/// the victim, and its retry applies once the test's transaction is gone. Which row the
/// store locks first is the server's choice, so the scenario is repeated until a
/// deadlock happens (each round has even odds).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deadlock_victim_is_retried_and_applies() {
    let Some(db) = SqlServerTestDb::create().await else {
        return;
    };
    let store = db.store(2).await;
    for round in 0..12 {
        let entries = vec![
            NewEntry::new("t", b"a".to_vec()),
            NewEntry::new("t", b"b".to_vec()),
        ];
        store.enqueue_batch(entries).await.unwrap();
        let claims = store
            .claim_pending(&ClaimRequest::new("w", 2, TimeDelta::minutes(5)))
            .await
            .unwrap();
        assert_eq!(claims.len(), 2);
        let hex = |c: &outbox_core::Claim| format!("0x{}", c.id().as_uuid().simple());
        let mut test = db.client().await;
        run(&mut test, "SET DEADLOCK_PRIORITY HIGH; BEGIN TRANSACTION").await;
        run(
            &mut test,
            &format!(
                "UPDATE [{}].[outbox] SET last_error = N'held' WHERE id = {}",
                db.schema,
                hex(&claims[1])
            ),
        )
        .await;
        let before = store.retried_calls();
        let completing = tokio::spawn({
            let store = store.clone();
            let reqs: Vec<_> = claims
                .iter()
                .map(|c| {
                    CompletionRequest::new(c.clone(), Completion::Delivered(EmissionResult::new()))
                })
                .collect();
            async move { store.complete_batch(reqs).await }
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        run(
            &mut test,
            &format!(
                "UPDATE [{}].[outbox] SET last_error = N'held' WHERE id = {}",
                db.schema,
                hex(&claims[0])
            ),
        )
        .await;
        run(&mut test, "COMMIT TRANSACTION").await;
        let results = completing
            .await
            .unwrap()
            .expect("the completion applies in the end");
        assert!(
            results
                .iter()
                .all(|r| r.outcome == TransitionOutcome::Applied),
            "{results:?}"
        );
        if store.retried_calls() > before {
            eprintln!("deadlock victim retried in round {round}");
            return;
        }
    }
    panic!("no round produced a deadlock victim to retry");
}
