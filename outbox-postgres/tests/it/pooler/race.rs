//! Many workers through the pooler's two server connections: every entry claimed once,
//! leases that expire under slow holders, and per-key order (the cases of `race.rs`).

use std::sync::Arc;

use crate::race::{claimed_once, no_stale_completion};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_workers_twenty_thousand_entries_through_two_server_connections() {
    let Some((db, bouncer)) = super::pooled_db().await else {
        return;
    };
    claimed_once(
        Arc::new(super::store_through(&db, bouncer, 8).await),
        20_000,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn expiring_leases_through_the_pooler_never_let_a_stale_holder_complete() {
    let Some((db, bouncer)) = super::pooled_db().await else {
        return;
    };
    no_stale_completion(Arc::new(super::store_through(&db, bouncer, 8).await)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_workers_drain_a_thousand_keys_in_order_through_the_pooler() {
    let Some((db, bouncer)) = super::pooled_db().await else {
        return;
    };
    let store = Arc::new(super::store_through(&db, bouncer, 8).await);
    outbox_testkit::race_ordered::eight_workers_a_thousand_keys("postgres-pooled", store).await;
}
