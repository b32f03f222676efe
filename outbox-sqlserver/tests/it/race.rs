//! Many workers in one process over one table: the race harness at 50,000 entries.

use std::sync::Arc;
use std::time::Instant;

use outbox_testkit::race::{claim_and_complete, RaceConfig};

use crate::support::SqlServerTestDb;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_workers_fifty_thousand_entries() {
    let Some(db) = SqlServerTestDb::create().await else {
        return;
    };
    let store = Arc::new(db.store(8).await);
    let config = RaceConfig {
        workers: 8,
        entries: 50_000,
        batch_size: 100,
        ..RaceConfig::default()
    };
    let started = Instant::now();
    let report = claim_and_complete(store.clone(), config).await;
    eprintln!(
        "race: {report:?} in {:?}, {} call(s) retried",
        started.elapsed(),
        store.retried_calls()
    );
    assert_eq!(report.delivered, 50_000);
    assert_eq!(report.claims, 50_000, "an entry was claimed twice");
}

/// Eight workers drain 1,000 keys in per-key order, some emissions outliving their
/// leases: every key's emissions come out in creation order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_workers_drain_a_thousand_keys_in_order() {
    let Some(db) = SqlServerTestDb::create().await else {
        return;
    };
    let store = Arc::new(db.store(8).await);
    outbox_testkit::race_ordered::eight_workers_a_thousand_keys("sqlserver", store).await;
}
