//! Many workers on one table: SKIP LOCKED claims from many pooled connections.

use std::sync::Arc;

use outbox_mysql::MySqlStoreConfig;
use outbox_testkit::race::{claim_and_complete, RaceConfig};

use crate::common::fresh_store;

/// Eight workers, 50,000 entries: no entry is leased twice at once, and every entry is
/// delivered exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_workers_deliver_fifty_thousand_entries_exactly_once() {
    let Some((store, _db)) = fresh_store(MySqlStoreConfig::new().max_connections(10)).await else {
        return;
    };
    let report = claim_and_complete(
        Arc::new(store),
        RaceConfig {
            entries: 50_000,
            batch_size: 100,
            ..RaceConfig::default()
        },
    )
    .await;
    println!("mariadb race: {report:?}");
    assert_eq!(report.delivered, 50_000);
}

/// Leases shorter than some emissions: entries are reclaimed under slow holders, renewals
/// race the reclaims, and only the last holder's completion may apply.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn leases_that_expire_under_slow_emissions_never_let_a_stale_holder_complete() {
    let Some((store, _db)) = fresh_store(MySqlStoreConfig::new().max_connections(8)).await else {
        return;
    };
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
    let Some((store, _db)) = fresh_store(MySqlStoreConfig::new().max_connections(10)).await else {
        return;
    };
    outbox_testkit::race_ordered::eight_workers_a_thousand_keys("mariadb", Arc::new(store)).await;
}
