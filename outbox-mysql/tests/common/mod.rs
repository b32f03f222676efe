//! Stores on the test server's throwaway databases (`outbox_testkit::mysql`).

#![allow(dead_code)]

use std::sync::Arc;

use outbox_mysql::{MySqlClaimStore, MySqlStoreConfig};
pub(crate) use outbox_testkit::mysql::TestDatabase;
use sqlx::MySqlPool;

/// A pool on `db`, as the store opens one.
pub(crate) async fn pool(db: &TestDatabase, connections: u32) -> MySqlPool {
    MySqlClaimStore::open_pool(
        &db.url,
        &MySqlStoreConfig::new().max_connections(connections),
    )
    .await
    .expect("open a pool")
}

/// A migrated store on `db`'s table of `config`.
pub(crate) async fn store(db: &TestDatabase, config: MySqlStoreConfig) -> MySqlClaimStore {
    let pool = MySqlClaimStore::open_pool(&db.url, &config)
        .await
        .expect("open a pool");
    outbox_mysql::migrate(&pool, config.table_name())
        .await
        .expect("migrate");
    MySqlClaimStore::new(pool, config).await.expect("store")
}

/// A migrated store on a fresh database, and the database (keep it alive).
pub(crate) async fn fresh_store(
    config: MySqlStoreConfig,
) -> Option<(MySqlClaimStore, TestDatabase)> {
    let db = TestDatabase::create().await?;
    let store = store(&db, config).await;
    Some((store, db))
}

/// The conformance suite's factory.
pub(crate) async fn subject() -> Option<outbox_testkit::Subject> {
    let (store, db) = fresh_store(MySqlStoreConfig::new()).await?;
    Some(outbox_testkit::Subject::new(Arc::new(store)).with_guard(db))
}

/// The operator suite's factory.
pub(crate) async fn admin_subject(
) -> Option<(outbox_testkit::admin_cases::AdminStore, TestDatabase)> {
    let (store, db) = fresh_store(MySqlStoreConfig::new()).await?;
    Some((Arc::new(store), db))
}
