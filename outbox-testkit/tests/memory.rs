//! The conformance suite and the race harness against the in-memory store.

use std::sync::Arc;

use outbox_core::MemoryClaimStore;
use outbox_testkit::race::{claim_and_complete, RaceConfig};
use outbox_testkit::Subject;

async fn memory_subject() -> Subject {
    Subject::new(Arc::new(MemoryClaimStore::new()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn race_eight_workers_ten_thousand_entries() {
    let store = Arc::new(MemoryClaimStore::new());
    let report = claim_and_complete(store.clone(), RaceConfig::default()).await;
    assert_eq!(report.delivered, 10_000);
}

async fn drain_subject() -> Option<outbox_testkit::drain_cases::DrainSubject> {
    let clock = Arc::new(outbox_core::ManualClock::new(outbox_testkit::fixtures::t0()));
    let store = MemoryClaimStore::new().with_clock(clock.clone());
    Some(outbox_testkit::drain_cases::DrainSubject {
        store: Arc::new(outbox_core::Observed::new(store)),
        clock,
        guard: Box::new(()),
    })
}

async fn admin_subject() -> Option<(outbox_testkit::admin_cases::AdminStore, ())> {
    Some((Arc::new(MemoryClaimStore::new()), ()))
}

outbox_testkit::store_suite! {
    store: memory_subject,
    admin: admin_subject,
    ordered_admin: admin_subject,
    drain: drain_subject,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn race_with_leases_that_expire_under_slow_emissions() {
    let store = Arc::new(MemoryClaimStore::new());
    let report = outbox_testkit::race::expiring_leases(
        store,
        outbox_testkit::race::ExpiryRaceConfig::default(),
    )
    .await;
    assert!(
        report.reclaimed > 0,
        "no lease ran out under a slow emission: {report:?}"
    );
    assert!(report.lost > 0, "no renewal raced a reclaim: {report:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ordered_race_eight_workers_a_thousand_keys_fifty_thousand_entries() {
    let store = Arc::new(MemoryClaimStore::new());
    outbox_testkit::race_ordered::eight_workers_a_thousand_keys("memory", store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ordered_race_eight_workers_ten_keys() {
    let store = Arc::new(MemoryClaimStore::new());
    outbox_testkit::race_ordered::eight_workers_ten_keys("memory", store).await;
}
