//! Writers and claimers at once: hosts enqueue one entry per transaction, on sessions of
//! their own at the server's default isolation (REPEATABLE READ), while eight workers
//! claim and complete. The claims take no gap locks, so no writer waits for a claimer or
//! is chosen as a deadlock victim, and nothing is lost.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::TimeDelta;
use outbox_core::{
    ClaimRequest, ClaimStore, Completion, CompletionRequest, EmissionResult, EmissionStatus,
    NewEntry, OutboxAdmin, TransitionOutcome,
};
use outbox_mysql::MySqlStoreConfig;
use sqlx::mysql::MySqlPoolOptions;

use crate::common::fresh_store;

const WRITERS: u32 = 4;
const PER_WRITER: usize = 400;
const WORKERS: usize = 8;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn single_row_enqueues_in_host_transactions_never_fail_while_eight_workers_claim() {
    let Some((store, db)) = fresh_store(MySqlStoreConfig::new().max_connections(10)).await else {
        return;
    };
    let store = Arc::new(store);
    // The host's own pool: plain sessions, the server's default isolation.
    let host = MySqlPoolOptions::new()
        .max_connections(WRITERS)
        .connect(&db.url)
        .await
        .unwrap();
    sqlx::query(
        "CREATE TABLE orders (id INT AUTO_INCREMENT PRIMARY KEY, n INT NOT NULL) ENGINE = InnoDB",
    )
    .execute(&host)
    .await
    .unwrap();
    let writing = Arc::new(AtomicUsize::new(WRITERS as usize));
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (host, writer, writing) = (host.clone(), store.writer().clone(), writing.clone());
            tokio::spawn(async move {
                for i in 0..PER_WRITER {
                    let mut tx = host.begin().await.expect("begin");
                    sqlx::query("INSERT INTO orders (n) VALUES (?)")
                        .bind(i64::try_from(i).unwrap())
                        .execute(&mut *tx)
                        .await
                        .expect("the business row");
                    let entry = NewEntry::new("orders", format!("{w}-{i}").into_bytes());
                    writer
                        .enqueue_in(&mut tx, vec![entry])
                        .await
                        .expect("a writer failed while claims ran");
                    tx.commit().await.expect("a writer's commit failed");
                }
                writing.fetch_sub(1, Ordering::SeqCst);
            })
        })
        .collect();
    let delivered = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            let (store, delivered, writing) = (store.clone(), delivered.clone(), writing.clone());
            tokio::spawn(async move {
                let req = ClaimRequest::new(format!("w{w}"), 20, TimeDelta::minutes(1));
                loop {
                    assert!(started.elapsed() < Duration::from_secs(180), "no progress");
                    let claims = store.claim_pending(&req).await.expect("claim");
                    if claims.is_empty() {
                        if writing.load(Ordering::SeqCst) == 0 {
                            let pending = store
                                .stats(&outbox_core::StatsRequest::new())
                                .await
                                .unwrap();
                            if pending.count(EmissionStatus::Pending) == 0 {
                                return;
                            }
                        }
                        tokio::time::sleep(Duration::from_millis(5)).await;
                        continue;
                    }
                    let reqs = claims
                        .iter()
                        .map(|c| {
                            CompletionRequest::new(
                                c.clone(),
                                Completion::Delivered(EmissionResult::new()),
                            )
                        })
                        .collect();
                    for r in store.complete_batch(reqs).await.expect("complete") {
                        assert_eq!(r.outcome, TransitionOutcome::Applied);
                        delivered.fetch_add(1, Ordering::SeqCst);
                    }
                }
            })
        })
        .collect();
    for w in writers {
        w.await.unwrap();
    }
    for w in workers {
        w.await.unwrap();
    }
    let stats = store
        .stats(&outbox_core::StatsRequest::new())
        .await
        .unwrap();
    let orders: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM orders")
        .fetch_one(&host)
        .await
        .unwrap();
    assert_eq!(orders, i64::from(WRITERS) * PER_WRITER as i64);
    assert_eq!(
        delivered.load(Ordering::SeqCst),
        WRITERS as usize * PER_WRITER
    );
    assert_eq!(
        stats.count(EmissionStatus::Delivered),
        (WRITERS as usize * PER_WRITER) as u64
    );
}
