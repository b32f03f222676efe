//! Many workers through the pooler's two server connections: every entry claimed once,
//! leases that expire under slow holders, and per-key order.

use std::sync::Arc;

use outbox_testkit::race::{claim_and_complete, RaceConfig};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_workers_twenty_thousand_entries_through_two_server_connections() {
    let Some((db, bouncer)) = super::pooled_db().await else {
        return;
    };
    let store = Arc::new(super::store_through(&db, bouncer, 8).await);
    let config = RaceConfig {
        workers: 8,
        entries: 20_000,
        batch_size: 100,
        ..RaceConfig::default()
    };
    let report = claim_and_complete(store, config).await;
    assert_eq!(report.delivered, 20_000);
    assert_eq!(report.claims, 20_000, "an entry was claimed twice");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn expiring_leases_through_the_pooler_never_let_a_stale_holder_complete() {
    let Some((db, bouncer)) = super::pooled_db().await else {
        return;
    };
    let store = Arc::new(super::store_through(&db, bouncer, 8).await);
    let report = outbox_testkit::race::expiring_leases(
        store,
        outbox_testkit::race::ExpiryRaceConfig::default(),
    )
    .await;
    assert!(
        report.reclaimed > 0,
        "no lease ran out under a slow emission: {report:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_workers_drain_a_thousand_keys_in_order_through_the_pooler() {
    let Some((db, bouncer)) = super::pooled_db().await else {
        return;
    };
    let store = Arc::new(super::store_through(&db, bouncer, 8).await);
    outbox_testkit::race_ordered::eight_workers_a_thousand_keys("postgres-pooled", store).await;
}
