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

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_workers_drain_ten_keys_in_order() {
    let Some((store, _db)) = fresh_store(MySqlStoreConfig::new().max_connections(10)).await else {
        return;
    };
    outbox_testkit::race_ordered::eight_workers_ten_keys("mariadb", Arc::new(store)).await;
}

/// The key checks of a claim in key order read the key's rows without locking them, so a
/// head another transaction holds locked (a claim between its locking read and its
/// commit) still holds its key: the claim skips the head and takes nothing behind it.
/// Were the skip applied inside the checks, the key's second entry would look like its
/// head and be claimed ahead of the first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_head_locked_by_another_claim_holds_its_key() {
    use outbox_core::{ClaimRequest, ClaimStore, NewEntry, OutboxStore};
    let Some((store, _db)) = fresh_store(MySqlStoreConfig::new()).await else {
        return;
    };
    let entry = |key: &str, ms: i64| {
        NewEntry::new("t", b"x".to_vec())
            .partition_key(key)
            .created_at(chrono::Utc::now() - chrono::TimeDelta::milliseconds(1_000 - ms))
    };
    let written = store
        .enqueue_batch(vec![
            entry("a", 0),
            entry("a", 1),
            entry("b", 2),
            entry("a", 3),
        ])
        .await
        .unwrap();
    let mut holder = store.pool().begin().await.unwrap();
    sqlx::query("SELECT seq FROM outbox WHERE id = ? FOR UPDATE")
        .bind(written[0].id.as_uuid().as_bytes().to_vec())
        .fetch_all(&mut *holder)
        .await
        .unwrap();
    let lease = chrono::TimeDelta::seconds(30);
    for req in [
        ClaimRequest::new("w", 10, lease).in_key_order(),
        ClaimRequest::new("w", 10, lease).in_key_runs(10),
    ] {
        let claims = store.claim_next(&req).await.unwrap();
        let ids: Vec<_> = claims.iter().map(|c| c.id()).collect();
        assert_eq!(
            ids,
            vec![written[2].id],
            "only b: a's head is held ({req:?})"
        );
        let release = claims
            .into_iter()
            .map(|c| {
                outbox_core::CompletionRequest::new(
                    c,
                    outbox_core::Completion::Release { reason: None },
                )
            })
            .collect();
        store.complete_batch(release).await.unwrap();
    }
    holder.rollback().await.unwrap();
    let req = ClaimRequest::new("w", 10, lease).in_key_runs(10);
    let ids: Vec<_> = store
        .claim_next(&req)
        .await
        .unwrap()
        .iter()
        .map(|c| c.id())
        .collect();
    assert_eq!(
        ids,
        vec![written[0].id, written[1].id, written[2].id, written[3].id],
        "a's run whole once its head is free"
    );
}
