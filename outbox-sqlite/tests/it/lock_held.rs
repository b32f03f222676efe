//! Another connection holding the write lock longer than the busy timeout: claims and
//! completions fail as conflicts (retryable) while it holds it, and the same store, on
//! the same pooled connection, succeeds once it lets go.

use std::time::Duration;

use outbox_core::{
    ClaimStore, Completion, CompletionRequest, EmissionResult, OutboxError, OutboxStore,
};
use outbox_sqlite::SqliteStoreConfig;
use outbox_testkit::fixtures::{claim_req, new_entry, t0};
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{Connection, SqliteConnection};

use crate::support::fresh_store;

fn assert_conflict(what: &str, err: &OutboxError) {
    assert!(
        matches!(err, OutboxError::Conflict { .. }),
        "{what} should fail as a conflict, got: {err:?}"
    );
}

#[tokio::test]
async fn a_write_lock_held_past_the_busy_timeout_refuses_calls_until_it_is_released() {
    let config = SqliteStoreConfig::new()
        .busy_timeout(Duration::from_millis(100))
        .max_connections(1);
    let (store, dir) = fresh_store(config).await;
    store
        .enqueue_batch((0..10).map(|i| new_entry(i - 10)).collect())
        .await
        .unwrap();
    let claims = store
        .claim_pending(&claim_req("worker", 5, t0()))
        .await
        .unwrap();
    let delivered: Vec<_> = claims
        .iter()
        .map(|c| {
            CompletionRequest::new(c.clone(), Completion::Delivered(EmissionResult::new())).at(t0())
        })
        .collect();

    let options = SqliteConnectOptions::new().filename(dir.path().join("outbox.db"));
    let mut other = SqliteConnection::connect_with(&options).await.unwrap();
    let held = other.begin_with("BEGIN IMMEDIATE").await.unwrap();
    let err = store
        .claim_pending(&claim_req("worker", 5, t0()))
        .await
        .unwrap_err();
    assert_conflict("a claim while another connection holds the lock", &err);
    let err = store.complete_batch(delivered.clone()).await.unwrap_err();
    assert_conflict("a completion while another connection holds the lock", &err);
    held.rollback().await.unwrap();

    let results = store.complete_batch(delivered).await.unwrap();
    assert!(results.iter().all(|r| r.is_applied()), "{results:?}");
    let rest = store
        .claim_pending(&claim_req("worker", 10, t0()))
        .await
        .unwrap();
    assert_eq!(rest.len(), 5, "the refused claim took nothing");
}
