//! Many workers over one file: several pooled connections racing for the write lock.

use std::sync::Arc;

use outbox_sqlite::SqliteStoreConfig;
use outbox_testkit::race::{claim_and_complete, RaceConfig};

use crate::support::fresh_store;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_workers_deliver_ten_thousand_entries_exactly_once() {
    let (store, _dir) = fresh_store(SqliteStoreConfig::new().max_connections(8)).await;
    let report = claim_and_complete(
        Arc::new(store),
        RaceConfig {
            batch_size: 50,
            ..RaceConfig::default()
        },
    )
    .await;
    assert_eq!(report.delivered, 10_000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_stores_on_one_file_never_share_a_row() {
    // Two independent pools on one file behave like two processes.
    let (first, dir) = fresh_store(SqliteStoreConfig::new().max_connections(4)).await;
    let path = dir.path().join("outbox.db");
    let second = outbox_sqlite::SqliteClaimStore::open(
        path.to_str().unwrap(),
        SqliteStoreConfig::new().max_connections(4),
    )
    .await
    .unwrap();
    use outbox_core::{ClaimRequest, ClaimStore, NewEntry, OutboxStore};
    let entries = (0..2000)
        .map(|i| NewEntry::new("t", format!("{i}").into_bytes()))
        .collect::<Vec<_>>();
    for chunk in entries.chunks(1000) {
        first.enqueue_batch(chunk.to_vec()).await.unwrap();
    }
    let req = ClaimRequest::new("w", 100, chrono::TimeDelta::minutes(5));
    let (a, b) = (Arc::new(first), Arc::new(second));
    let mut tasks = Vec::new();
    for store in [
        a.clone() as Arc<dyn ClaimStore>,
        b.clone(),
        a.clone(),
        b.clone(),
    ] {
        let req = req.clone();
        tasks.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            loop {
                let claims = store.claim_pending(&req).await.unwrap();
                if claims.is_empty() {
                    return mine;
                }
                mine.extend(claims.into_iter().map(|c| c.id()));
            }
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    let unique: std::collections::HashSet<_> = all.iter().collect();
    assert_eq!(all.len(), 2000, "every row claimed once");
    assert_eq!(unique.len(), 2000, "a row was claimed twice");
}

/// Leases shorter than some emissions: entries are reclaimed under slow holders, renewals
/// race the reclaims, and only the last holder's completion may apply.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn leases_that_expire_under_slow_emissions_never_let_a_stale_holder_complete() {
    let (store, _dir) = fresh_store(SqliteStoreConfig::new().max_connections(6)).await;
    let report = outbox_testkit::race::expiring_leases(
        Arc::new(store),
        outbox_testkit::race::ExpiryRaceConfig::default(),
    )
    .await;
    assert!(
        report.reclaimed > 0,
        "no lease ran out under a slow emission: {report:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_workers_drain_a_thousand_keys_in_order() {
    let (store, _dir) =
        crate::support::fresh_ordered_store(SqliteStoreConfig::new().max_connections(8)).await;
    outbox_testkit::race_ordered::eight_workers_a_thousand_keys("sqlite", Arc::new(store)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_workers_drain_ten_keys_in_order() {
    let (store, _dir) =
        crate::support::fresh_ordered_store(SqliteStoreConfig::new().max_connections(8)).await;
    outbox_testkit::race_ordered::eight_workers_ten_keys("sqlite", Arc::new(store)).await;
}
