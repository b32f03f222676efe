//! A worker whose leases ran out and were reclaimed completes late (the shared case).

use std::sync::Arc;

use crate::support::SqlServerTestDb;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_worker_changes_nothing_it_no_longer_holds() {
    let Some(db) = SqlServerTestDb::create().await else {
        return;
    };
    let store = Arc::new(db.store(2).await);
    outbox_testkit::faults::a_stale_worker_changes_nothing_it_no_longer_holds(store).await;
}
