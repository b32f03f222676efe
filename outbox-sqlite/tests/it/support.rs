//! Building stores on fresh database files.

use std::path::Path;
use std::sync::Arc;

use outbox_core::drain::{Drain, DrainOptions, DrainSummary, Emitter};
use outbox_core::{NewEntry, OutboxStore, TableName};
use outbox_sqlite::{SqliteClaimStore, SqliteStoreConfig};
use outbox_testkit::Subject;

/// A migrated store on the database file `path` (created if missing).
pub(crate) async fn store_at(path: &Path, config: SqliteStoreConfig) -> SqliteClaimStore {
    let pool = SqliteClaimStore::open_pool(path.to_str().expect("utf-8 path"), &config)
        .await
        .expect("open");
    outbox_sqlite::migrate(&pool, &TableName::default())
        .await
        .expect("migrate");
    SqliteClaimStore::new(pool, config).await.expect("store")
}

/// A migrated store on a new file in a new temporary directory (kept alive by the caller).
pub(crate) async fn fresh_store(
    config: SqliteStoreConfig,
) -> (SqliteClaimStore, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = store_at(&dir.path().join("outbox.db"), config).await;
    (store, dir)
}

/// Like [`fresh_store`], with the table prepared for claims in per-key order.
pub(crate) async fn fresh_ordered_store(
    config: SqliteStoreConfig,
) -> (SqliteClaimStore, tempfile::TempDir) {
    let (store, dir) = fresh_store(config.clone()).await;
    outbox_sqlite::enable_ordered_claims(store.pool(), &TableName::default())
        .await
        .expect("enable ordered claims");
    let store = SqliteClaimStore::new(store.pool().clone(), config)
        .await
        .expect("store");
    (store, dir)
}

/// The conformance suite's factory.
pub(crate) async fn subject() -> Subject {
    let (store, dir) = fresh_ordered_store(SqliteStoreConfig::new()).await;
    Subject::new(Arc::new(store)).with_guard(dir)
}

/// The operator suite's factory.
pub(crate) async fn admin_subject(
) -> Option<(outbox_testkit::admin_cases::AdminStore, tempfile::TempDir)> {
    let (store, dir) = fresh_store(SqliteStoreConfig::new()).await;
    Some((Arc::new(store), dir))
}

/// Enqueues `n` entries of topic `orders`, in batches of up to 500.
pub(crate) async fn enqueue_orders(store: &SqliteClaimStore, n: usize) {
    for first in (0..n).step_by(500) {
        let entries = (first..n.min(first + 500))
            .map(|i| NewEntry::new("orders", format!("{{\"order\":{i}}}").into_bytes()))
            .collect();
        store.enqueue_batch(entries).await.expect("enqueue");
    }
}

/// Runs a drain of `store` into `emitter` on a task of its own until nothing is left to
/// send or `stop` completes.
pub(crate) fn spawn_drain(
    store: &SqliteClaimStore,
    emitter: Arc<dyn Emitter>,
    options: DrainOptions,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> tokio::task::JoinHandle<DrainSummary> {
    let drain = Drain::new(Arc::new(store.clone()), emitter, options).expect("drain options");
    let watched = store.clone();
    tokio::spawn(async move {
        let done = move || {
            let store = watched.clone();
            async move { outbox_testkit::emitters::nothing_left_to_send(&store).await }
        };
        drain.run_until(done, stop).await
    })
}
