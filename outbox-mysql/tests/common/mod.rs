//! A throwaway database per test on the MariaDB / MySQL test server
//! (`OUTBOX_TEST_MYSQL_URL`, by default the machine's own server as root), dropped when the
//! test ends. An unreachable server is reported loudly, and fails the test when
//! `OUTBOX_TEST_REQUIRE` names `mariadb`.

#![allow(dead_code)]

use std::sync::Arc;

use outbox_core::TableName;
use outbox_mysql::{MySqlClaimStore, MySqlStoreConfig};
use sqlx::{Connection, Executor, MySqlConnection, MySqlPool};

/// The engine's name in `OUTBOX_TEST_REQUIRE` and in the skip banner.
pub(crate) const ENGINE: &str = "mariadb";

/// The server the tests use, without a database.
pub(crate) fn server_url() -> String {
    std::env::var("OUTBOX_TEST_MYSQL_URL")
        .unwrap_or_else(|_| "mysql://root@127.0.0.1:3306".to_owned())
}

/// A database of its own for one test; dropped with it.
pub(crate) struct TestDatabase {
    /// The database's name.
    pub(crate) name: String,
    /// A URL naming it.
    pub(crate) url: String,
}

impl TestDatabase {
    /// Creates a fresh database, or reports the server unreachable and returns `None`.
    pub(crate) async fn create() -> Option<Self> {
        let server = server_url();
        let mut admin = match MySqlConnection::connect(&server).await {
            Ok(conn) => conn,
            Err(e) => {
                outbox_testkit::engines::unavailable(ENGINE, &format!("{server}: {e}"));
                return None;
            }
        };
        let name = format!("outbox_t_{}", uuid::Uuid::new_v4().simple());
        admin
            .execute(format!("CREATE DATABASE `{name}`").as_str())
            .await
            .expect("create the test database");
        let url = format!("{}/{name}", server.trim_end_matches('/'));
        Some(Self { name, url })
    }

    /// A pool on the database, as the store opens one.
    pub(crate) async fn pool(&self, connections: u32) -> MySqlPool {
        MySqlClaimStore::open_pool(
            &self.url,
            &MySqlStoreConfig::new().max_connections(connections),
        )
        .await
        .expect("open a pool")
    }

    /// A migrated store on the database's `outbox` table.
    pub(crate) async fn store(&self, config: MySqlStoreConfig) -> MySqlClaimStore {
        let pool = MySqlClaimStore::open_pool(&self.url, &config)
            .await
            .expect("open a pool");
        outbox_mysql::migrate(&pool, config.table_name())
            .await
            .expect("migrate");
        MySqlClaimStore::new(pool, config).await.expect("store")
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let (server, name) = (server_url(), self.name.clone());
        // A drop cannot await: a thread of its own runs the statement to its end.
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            runtime.block_on(async move {
                let mut admin = MySqlConnection::connect(&server).await?;
                admin
                    .execute(format!("DROP DATABASE IF EXISTS `{name}`").as_str())
                    .await
                    .map(drop)
            })
        })
        .join();
        if !matches!(dropped, Ok(Ok(()))) {
            eprintln!("could not drop the test database {}", self.name);
        }
    }
}

/// A migrated store on a fresh database, and the database (keep it alive).
pub(crate) async fn fresh_store(
    config: MySqlStoreConfig,
) -> Option<(MySqlClaimStore, TestDatabase)> {
    let db = TestDatabase::create().await?;
    let store = db.store(config).await;
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

/// The default table's name.
pub(crate) fn outbox_table() -> TableName {
    TableName::default()
}
