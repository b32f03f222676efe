//! A worker whose leases ran out and were reclaimed completes late (the shared case).

use std::sync::Arc;

use crate::support;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_worker_changes_nothing_it_no_longer_holds() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let store = Arc::new(support::store(&db, 2).await);
    outbox_testkit::faults::a_stale_worker_changes_nothing_it_no_longer_holds(store).await;
}
