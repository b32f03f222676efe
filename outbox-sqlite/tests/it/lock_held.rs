//! Another connection holding the write lock longer than the busy timeout: claims and
//! completions fail as conflicts (retryable) while it holds it, and the same store, on
//! the same pooled connection, succeeds once it lets go; a drain's renewals refused
//! meanwhile are counted, not lost silently.

use std::sync::Arc;
use std::time::Duration;

use chrono::TimeDelta;
use outbox_core::drain::{DrainOptions, Emission, EmitOutcome, Emitter};
use outbox_core::{
    ClaimStore, Completion, CompletionRequest, EmissionResult, OutboxError, OutboxStore,
};
use outbox_sqlite::SqliteStoreConfig;
use outbox_testkit::fixtures::{claim_req, new_entry, t0};
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{Connection, SqliteConnection};

use crate::support::{enqueue_orders, fresh_store, spawn_drain};

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

/// Emissions that wait until the test lets them finish; counts each entry's emissions.
struct HeldEmissions {
    started: tokio::sync::Notify,
    finish: tokio::sync::watch::Sender<bool>,
    emissions: std::sync::Mutex<std::collections::HashMap<outbox_core::EntryId, u32>>,
}

#[outbox_core::async_trait]
impl Emitter for HeldEmissions {
    async fn emit(&self, emission: Emission<'_>) -> EmitOutcome {
        *self
            .emissions
            .lock()
            .expect("the counts' lock")
            .entry(emission.entry.id)
            .or_default() += 1;
        self.started.notify_one();
        let mut finish = self.finish.subscribe();
        finish.wait_for(|go| *go).await.expect("the test is gone");
        EmitOutcome::delivered()
    }
}

/// Renewals that failed as conflicts, counted so far in this binary.
fn failed_renewals() -> u64 {
    crate::metrics_seen::counters(outbox_core::metric_names::FAILED_RENEWALS)
        .iter()
        .filter(|(labels, _)| labels == "kind=conflict")
        .map(|(_, n)| n)
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renewals_refused_by_a_held_write_lock_are_counted_and_the_batch_still_completes() {
    crate::metrics_seen::start();
    let config = SqliteStoreConfig::new()
        .busy_timeout(Duration::from_millis(50))
        .max_connections(2);
    let (store, dir) = fresh_store(config).await;
    enqueue_orders(&store, 5).await;
    let emitter = Arc::new(HeldEmissions {
        started: tokio::sync::Notify::new(),
        finish: tokio::sync::watch::channel(false).0,
        emissions: std::sync::Mutex::default(),
    });
    // Renewed every 100 ms while the emissions run.
    let options = DrainOptions::new()
        .owner("renewing")
        .batch_size(5)
        .lease(TimeDelta::milliseconds(300))
        .poll_interval(Duration::from_millis(10), Duration::from_millis(50));
    let running = spawn_drain(&store, emitter.clone(), options, std::future::pending());
    tokio::time::timeout(Duration::from_secs(10), emitter.started.notified())
        .await
        .expect("the drain never started emitting");

    let before = failed_renewals();
    let options = SqliteConnectOptions::new().filename(dir.path().join("outbox.db"));
    let mut other = SqliteConnection::connect_with(&options).await.unwrap();
    let held = other.begin_with("BEGIN IMMEDIATE").await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), async {
        while failed_renewals() - before < 2 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("renewals refused by the held lock were not counted");
    held.rollback().await.unwrap();
    emitter.finish.send_replace(true);

    let summary = tokio::time::timeout(Duration::from_secs(20), running)
        .await
        .expect("the drain did not finish once the lock was released")
        .unwrap();
    assert_eq!(summary.delivered, 5, "{summary:?}");
    let emissions = emitter.emissions.lock().unwrap().clone();
    assert_eq!(emissions.len(), 5);
    assert!(
        emissions.values().all(|&n| n == 1),
        "an entry was emitted twice: {emissions:?}"
    );
}
