//! Building stores on fresh database files.

use std::sync::Arc;

use outbox_core::TableName;
use outbox_sqlite::{SqliteClaimStore, SqliteStoreConfig};
use outbox_testkit::Subject;

/// A migrated store on a new file in a new temporary directory (kept alive by the caller).
pub(crate) async fn fresh_store(
    config: SqliteStoreConfig,
) -> (SqliteClaimStore, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("outbox.db");
    let pool = SqliteClaimStore::open_pool(path.to_str().expect("utf-8 path"), &config)
        .await
        .expect("open");
    outbox_sqlite::migrate(&pool, &TableName::default())
        .await
        .expect("migrate");
    let store = SqliteClaimStore::new(pool, config).await.expect("store");
    (store, dir)
}

/// The conformance suite's factory.
pub(crate) async fn subject() -> Subject {
    let (store, dir) = fresh_store(SqliteStoreConfig::new()).await;
    Subject::new(Arc::new(store)).with_guard(dir)
}

/// The operator suite's factory.
pub(crate) async fn admin_subject(
) -> Option<(outbox_testkit::admin_cases::AdminStore, tempfile::TempDir)> {
    let (store, dir) = fresh_store(SqliteStoreConfig::new()).await;
    Some((Arc::new(store), dir))
}
