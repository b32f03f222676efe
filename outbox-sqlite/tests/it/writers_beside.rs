//! Turns at the write lock: a drain claims its next batch ahead while the store's own
//! connection has not had to wait for another writer, and writers beside it (here, a host
//! committing transactions on the pool flat out) still get the lock in good time.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::TimeDelta;
use outbox_core::drain::{DrainOptions, Emission, EmitOutcome, Emitter};
use outbox_core::{ClaimRequest, ClaimStore, OutboxStore};
use outbox_sqlite::{SqliteClaimStore, SqliteStoreConfig};

use crate::support::{enqueue_orders, fresh_store, spawn_drain};

/// Delivers everything.
struct Accept;

#[outbox_core::async_trait]
impl Emitter for Accept {
    async fn emit(&self, _: Emission<'_>) -> EmitOutcome {
        EmitOutcome::delivered()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_that_waited_for_another_writer_says_so_and_one_alone_does_not() {
    let (store, _dir) = fresh_store(SqliteStoreConfig::new()).await;
    enqueue_orders(&store, 20).await;
    let req = ClaimRequest::new("beside", 5, TimeDelta::minutes(1));
    assert_eq!(store.claim_next(&req).await.unwrap().len(), 5);
    assert!(
        !store.writers_beside(),
        "a store whose writes never waited counts a writer beside it"
    );
    // The host holds the write lock while the store claims: the claim waits for it.
    let mut host = store.pool().acquire().await.unwrap();
    sqlx::query("BEGIN IMMEDIATE")
        .execute(&mut *host)
        .await
        .unwrap();
    let claim = tokio::spawn({
        let store = store.clone();
        async move { store.claim_next(&req).await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    sqlx::query("COMMIT").execute(&mut *host).await.unwrap();
    assert_eq!(claim.await.unwrap().unwrap().len(), 5);
    assert!(
        store.writers_beside(),
        "a store that waited for the host's transaction does not say so"
    );
}

/// What the host's transactions met: how many committed, the longest one from asking for
/// the lock to its commit, and the first failure.
#[derive(Debug, Default)]
struct HostWrites {
    committed: u64,
    longest: Duration,
    failure: Option<String>,
}

/// Commits one-row transactions on the pool, one after another, until `stop`.
async fn write_flat_out(store: SqliteClaimStore, stop: Arc<AtomicBool>) -> HostWrites {
    let mut seen = HostWrites::default();
    let mut conn = store.pool().acquire().await.unwrap();
    sqlx::query("CREATE TABLE IF NOT EXISTS host_rows (x INTEGER)")
        .execute(&mut *conn)
        .await
        .unwrap();
    while !stop.load(Ordering::Relaxed) {
        let asked = Instant::now();
        let one = async {
            sqlx::query("BEGIN IMMEDIATE").execute(&mut *conn).await?;
            sqlx::query("INSERT INTO host_rows VALUES (1)")
                .execute(&mut *conn)
                .await?;
            sqlx::query("COMMIT").execute(&mut *conn).await
        };
        match one.await {
            Ok(_) => {
                seen.committed += 1;
                seen.longest = seen.longest.max(asked.elapsed());
            }
            Err(e) => {
                seen.failure = Some(e.to_string());
                break;
            }
        }
    }
    seen
}

/// A drain alone on the file claims ahead (it never waits for the lock); with a host
/// committing flat out beside it, the host keeps getting the lock in good time, and the
/// drain still delivers everything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_writing_flat_out_beside_a_drain_keeps_its_turns_at_the_lock() {
    let (store, _dir) = fresh_store(SqliteStoreConfig::new()).await;
    let entries = 20_000;
    enqueue_orders(&store, entries).await;
    let stop = Arc::new(AtomicBool::new(false));
    let host = tokio::spawn(write_flat_out(store.clone(), Arc::clone(&stop)));
    let options = DrainOptions::new()
        .owner("beside")
        .batch_size(100)
        .lease(TimeDelta::seconds(30));
    let started = Instant::now();
    let summary = spawn_drain(&store, Arc::new(Accept), options, std::future::pending())
        .await
        .unwrap();
    let took = started.elapsed();
    stop.store(true, Ordering::Relaxed);
    let host = host.await.unwrap();
    assert_eq!(summary.delivered, entries as u64, "{summary:?}");
    assert!(
        host.failure.is_none(),
        "a host transaction failed: {host:?}"
    );
    let per_entry = host.committed as f64 / entries as f64;
    eprintln!(
        "host beside the drain: {} transactions ({per_entry:.3} per entry delivered) in {took:?}, the longest {:?}",
        host.committed, host.longest
    );
    assert!(
        per_entry >= 0.1,
        "the host committed {per_entry:.3} transactions per entry delivered: {host:?}"
    );
    assert!(
        host.longest < Duration::from_secs(1),
        "a host transaction waited {:?} for its turn",
        host.longest
    );
}
