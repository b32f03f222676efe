//! An SQLite outbox (plain or prepared for key order) and the entries the tests send.

use std::sync::Arc;

use outbox_core::{AdminClaimStore, NewEntry, OutboxEntry, TableName};
use outbox_sqlite::{SqliteClaimStore, SqliteStoreConfig};

pub(crate) use outbox_testkit::emitters::{drain_all, rows};
pub(crate) use outbox_testkit::kafka::{client, TestTopic};

/// A migrated SQLite outbox in a temporary directory; prepared for claims in key order
/// when `ordered`.
pub(crate) async fn outbox(ordered: bool) -> (Arc<dyn AdminClaimStore>, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("outbox.db");
    let config = SqliteStoreConfig::new();
    let pool = SqliteClaimStore::open_pool(path.to_str().expect("utf-8 path"), &config)
        .await
        .expect("open");
    let table = TableName::default();
    outbox_sqlite::migrate(&pool, &table)
        .await
        .expect("migrate");
    if ordered {
        outbox_sqlite::enable_ordered_claims(&pool, &table)
            .await
            .expect("prepare for key order");
    }
    let store = SqliteClaimStore::new(pool, config).await.expect("store");
    (Arc::new(store), dir)
}

/// `n` entries of `topic` round robin over `keys` partition keys (`key-0`, …; none when
/// `keys` is 0), each with headers and a payload naming its place in the sequence.
pub(crate) async fn enqueue_keyed(
    store: &dyn AdminClaimStore,
    topic: &str,
    n: usize,
    keys: usize,
) -> Vec<OutboxEntry> {
    let entries = (0..n)
        .map(|i| {
            let entry = NewEntry::new(topic, format!("{{\"n\":{i}}}").into_bytes())
                .header("content-type", "application/json")
                .header("x-seq", i.to_string());
            if keys == 0 {
                entry
            } else {
                entry.partition_key(format!("key-{}", i % keys))
            }
        })
        .collect();
    store.enqueue_batch(entries).await.expect("enqueue")
}

/// The emitter URL of the test broker producing to `topic` (a template), with `extra`
/// parameters.
pub(crate) fn url(topic: &str, extra: &str) -> String {
    format!("{}?topic={topic}{extra}", outbox_testkit::kafka::url())
}
