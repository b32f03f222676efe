//! The portable store (`outbox_core::portable`) on the MariaDB / MySQL test server: the
//! testkit's portable cases (`portable_suite!`), each on a database of its own.

#[path = "common/mod.rs"]
mod common;

use std::sync::Arc;

use outbox_core::portable::PortableConfig;
use outbox_core::{async_trait, TableName};
use outbox_mysql::{MySqlBackend, MySqlStoreConfig, PortableMySqlStore};
use outbox_testkit::fixtures::DynStore;
use outbox_testkit::portable_cases::PortableEngine;

use outbox_testkit::mysql::TestDatabase;

/// MariaDB / MySQL as the portable cases see it: a fresh database per test.
struct MySql;

#[async_trait]
impl PortableEngine for MySql {
    type Backend = MySqlBackend;
    type Guard = TestDatabase;
    const NAME: &'static str = "portable-mysql";
    const RACE_CONNECTIONS: u32 = 10;

    async fn database() -> Option<TestDatabase> {
        TestDatabase::create().await
    }

    async fn store(db: &TestDatabase, table: &str, connections: u32) -> PortableMySqlStore {
        let pool = common::pool(db, connections).await;
        let table = TableName::new(table).unwrap();
        outbox_mysql::migrate(&pool, &table).await.unwrap();
        outbox_mysql::portable_store(pool, PortableConfig::default().table(table))
            .await
            .unwrap()
    }

    async fn enable_ordered_claims(_: &TestDatabase, _: &PortableMySqlStore) {
        // Every table of this engine is ready for claims in per-key order.
    }

    async fn erase_slice_hashes(_: &TestDatabase, store: &PortableMySqlStore) {
        // The column is NOT NULL here (the store's writers always fill it): loosen it, as
        // a table a host's own SQL writes to might be, then erase.
        for template in [
            "ALTER TABLE {table} MODIFY slice_hash BIGINT NULL",
            "UPDATE {table} SET slice_hash = NULL",
        ] {
            let sql = store
                .table()
                .render_in(template, outbox_core::Quotes::BACKTICKS);
            sqlx::query(&sql)
                .execute(store.backend().pool())
                .await
                .unwrap();
        }
    }

    async fn optimized(_: &TestDatabase, store: &PortableMySqlStore) -> DynStore {
        let config = MySqlStoreConfig::default().table(store.table().clone());
        let optimized = outbox_mysql::MySqlClaimStore::new(store.backend().pool().clone(), config)
            .await
            .unwrap();
        Arc::new(optimized)
    }
}

outbox_testkit::portable_suite!(MySql);
