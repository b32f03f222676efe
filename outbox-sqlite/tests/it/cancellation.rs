//! A host that drops a claim or completion future mid-flight leaves no open transaction
//! and no lock on the file behind; claims the cancelled call made come back after the lease.

use std::time::Duration;

use outbox_core::{ClaimStore, Completion, CompletionRequest, EmissionResult, OutboxStore};
use outbox_sqlite::SqliteStoreConfig;
use outbox_testkit::fixtures::{at, claim_req, lease, new_entry, t0};
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{Connection, SqliteConnection};

use crate::support::fresh_store;

/// A second connection that refuses to wait for locks.
async fn impatient(dir: &tempfile::TempDir) -> SqliteConnection {
    let options = SqliteConnectOptions::new()
        .filename(dir.path().join("outbox.db"))
        .busy_timeout(Duration::ZERO);
    SqliteConnection::connect_with(&options).await.unwrap()
}

/// Work a cancelled call left running may hold the lock for a moment; a transaction
/// left open would hold it forever. Wait up to two seconds for it.
async fn assert_write_lock_free(dir: &tempfile::TempDir) {
    let options = SqliteConnectOptions::new()
        .filename(dir.path().join("outbox.db"))
        .busy_timeout(Duration::from_secs(2));
    let mut conn = SqliteConnection::connect_with(&options).await.unwrap();
    let tx = conn
        .begin_with("BEGIN IMMEDIATE")
        .await
        .expect("the write lock is still held");
    tx.rollback().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_cancelled_while_waiting_for_the_lock_leaves_nothing_behind() {
    let (store, dir) = fresh_store(SqliteStoreConfig::new().max_connections(1)).await;
    store
        .enqueue_batch((0..5).map(|i| new_entry(-i)).collect())
        .await
        .unwrap();
    let mut blocker = impatient(&dir).await;
    let held = blocker.begin_with("BEGIN IMMEDIATE").await.unwrap();
    let cancelled = tokio::time::timeout(
        Duration::from_millis(200),
        store.claim_pending(&claim_req("cancelled", 5, t0())),
    )
    .await;
    assert!(
        cancelled.is_err(),
        "the claim should have been waiting for the lock"
    );
    held.rollback().await.unwrap();
    let next = tokio::time::timeout(
        Duration::from_secs(2),
        store.claim_pending(&claim_req("next", 5, t0())),
    )
    .await
    .expect("the next call must not wait for a leftover transaction")
    .unwrap();
    assert_write_lock_free(&dir).await;
    // The cancelled call may still have claimed (it ran on once the lock was free); then
    // the next call found nothing, and the rows come back when the lease runs out.
    if next.is_empty() {
        let leased = store
            .find_pending(&outbox_core::FindRequest::new(10).at(t0()))
            .await
            .unwrap();
        assert!(leased
            .iter()
            .all(|e| e.claim_owner.as_deref() == Some("cancelled")));
    } else {
        assert_eq!(next.len(), 5, "the two claims split the rows");
    }
    let back = store
        .claim_pending(&claim_req("rescuer", 5, t0() + lease()))
        .await
        .unwrap();
    assert_eq!(back.len(), 5, "rows were lost");
}

/// Polls `call` until it is done or `polls` scheduler turns have passed, then drops it.
async fn cancel_after<T>(polls: usize, call: impl std::future::Future<Output = T>) -> Option<T> {
    let give_up = async {
        for _ in 0..polls {
            tokio::task::yield_now().await;
        }
    };
    tokio::select! {
        biased;
        done = call => Some(done),
        () = give_up => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_cancelled_at_any_point_leave_no_lock_and_their_rows_come_back() {
    let (store, dir) = fresh_store(SqliteStoreConfig::new().max_connections(1)).await;
    store
        .enqueue_batch((0..40).map(|i| new_entry(-i)).collect())
        .await
        .unwrap();
    let mut cancelled = 0;
    for polls in 0..40usize {
        // Cancel at a different point of the call each time: before, during, after the statement.
        match cancel_after(polls, store.claim_pending(&claim_req("maybe", 1, t0()))).await {
            None => cancelled += 1,
            Some(claims) => {
                // Completions get cancelled at some point too.
                for c in claims.unwrap() {
                    let release =
                        CompletionRequest::new(c, Completion::Release { reason: None }).at(at(1));
                    let _ = cancel_after(polls / 2, store.complete(release)).await;
                }
            }
        }
        // The next call on the (single) connection succeeds at once.
        tokio::time::timeout(
            Duration::from_secs(2),
            store.get(outbox_core::EntryId::new()),
        )
        .await
        .expect("a cancelled call left the connection stuck")
        .unwrap();
        assert_write_lock_free(&dir).await;
    }
    assert!(
        cancelled > 0,
        "no call was cancelled; the test proved nothing"
    );
    // Whatever the cancelled calls claimed comes back once their leases run out.
    let back = store
        .claim_pending(&claim_req("rescuer", 100, t0() + lease()))
        .await
        .unwrap();
    if back.len() != 40 {
        let mut rows = Vec::new();
        for e in store
            .find_pending(&outbox_core::FindRequest::new(100).at(at(10_000)))
            .await
            .unwrap()
        {
            rows.push((e.claim_owner, e.claim_expires_at, e.status));
        }
        panic!(
            "rows were lost by cancelled calls: {} came back; pending rows: {rows:?}",
            back.len()
        );
    }
    for c in &back {
        store
            .mark_delivered(c, EmissionResult::new())
            .await
            .unwrap();
    }
}
