//! The conformance suite and the race harness against the in-memory store.

use std::sync::Arc;

use outbox_core::MemoryClaimStore;
use outbox_testkit::race::{claim_and_complete, RaceConfig};
use outbox_testkit::Subject;

async fn memory_subject() -> Subject {
    Subject::new(Arc::new(MemoryClaimStore::new()))
}

outbox_testkit::conformance_suite!(memory_subject);

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn race_eight_workers_ten_thousand_entries() {
    let store = Arc::new(MemoryClaimStore::new());
    let report = claim_and_complete(store.clone(), RaceConfig::default()).await;
    assert_eq!(report.delivered, 10_000);
}
