//! Many workers in one process over one table: the race harness at 50,000 entries.

use std::sync::Arc;
use std::time::Instant;

use outbox_postgres::PgClaimStore;
use outbox_testkit::race::{claim_and_complete, RaceConfig};

use crate::support;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_workers_fifty_thousand_entries() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    claimed_once(Arc::new(support::store(&db, 8).await), 50_000).await;
}

/// Eight workers at batch 100 claim and complete `entries`: each delivered once, none
/// claimed twice.
pub(crate) async fn claimed_once(store: Arc<PgClaimStore>, entries: usize) {
    let config = RaceConfig {
        workers: 8,
        entries,
        batch_size: 100,
        ..RaceConfig::default()
    };
    let started = Instant::now();
    let report = claim_and_complete(store, config).await;
    eprintln!("race: {report:?} in {:?}", started.elapsed());
    assert_eq!(report.delivered, entries);
    assert_eq!(report.claims, entries, "an entry was claimed twice");
}

/// Leases shorter than some emissions: entries are reclaimed under slow holders, renewals
/// race the reclaims, and only the last holder's completion may apply.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn leases_that_expire_under_slow_emissions_never_let_a_stale_holder_complete() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    no_stale_completion(Arc::new(support::store(&db, 8).await)).await;
}

/// The expiring-lease race on `store`, in rounds until one saw a lease run out under a
/// slow emission and get reclaimed (at most three: whether a reclaim lands in a round is
/// up to the scheduler, and through a pooler with two server connections the workers
/// can keep pace). Every round checks that no stale holder completed.
pub(crate) async fn no_stale_completion(store: Arc<PgClaimStore>) {
    let mut reports = Vec::new();
    for _ in 0..3 {
        let report = outbox_testkit::race::expiring_leases(
            store.clone(),
            outbox_testkit::race::ExpiryRaceConfig::default(),
        )
        .await;
        if report.reclaimed > 0 {
            return;
        }
        reports.push(report);
    }
    panic!("no lease ran out under a slow emission in three rounds: {reports:?}");
}

/// Eight workers drain 1,000 keys in per-key order, some emissions outliving their
/// leases: every key's emissions come out in creation order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_workers_drain_a_thousand_keys_in_order() {
    let Some(db) = support::ordered_db().await else {
        return;
    };
    let store = Arc::new(support::store(&db, 8).await);
    outbox_testkit::race_ordered::eight_workers_a_thousand_keys("postgres", store).await;
}

/// Eight workers on 10 keys in key runs: every head contended, runs reclaimed whole
/// after a lease ran out, and no entry of a key emitted before the ones before it.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_workers_drain_ten_keys_in_order() {
    let Some(db) = support::ordered_db().await else {
        return;
    };
    let store = Arc::new(support::store(&db, 8).await);
    outbox_testkit::race_ordered::eight_workers_ten_keys("postgres", store).await;
}
