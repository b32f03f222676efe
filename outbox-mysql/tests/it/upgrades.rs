//! Upgrades and rollbacks on the test MariaDB server: the shared cases of
//! `outbox_testkit::upgrades`.

use std::sync::Arc;

use outbox_core::store_kit::schema::Migrator;
use outbox_core::{async_trait, ClaimStore, OutboxError, Quotes, Result, TableName};
use outbox_mysql::{MySqlClaimStore, MySqlStoreConfig};
use outbox_testkit::mysql::TestDatabase;
use outbox_testkit::upgrades::SchemaHarness;
use sqlx::MySqlPool;

pub(crate) struct MariaDb {
    _db: TestDatabase,
    pool: MySqlPool,
    table: TableName,
}

pub(crate) async fn harness() -> Option<MariaDb> {
    let db = TestDatabase::create().await?;
    let pool = crate::common::pool(&db, 4).await;
    Some(MariaDb {
        _db: db,
        pool,
        table: TableName::new("events").unwrap(),
    })
}

#[async_trait]
impl SchemaHarness for MariaDb {
    fn migrator(&self) -> &'static Migrator {
        outbox_mysql::migrator()
    }

    async fn migrate_with(&self, migrator: &Migrator) -> Result<i64> {
        let mut conn = outbox_mysql::migration_connection(&self.pool);
        migrator.migrate(&mut conn, &self.table).await
    }

    async fn migrate_down_with(&self, migrator: &Migrator, version: i64) -> Result<()> {
        let mut conn = outbox_mysql::migration_connection(&self.pool);
        migrator
            .migrate_down_to(&mut conn, &self.table, version)
            .await
            .map(drop)
    }

    async fn open(&self) -> Result<Arc<dyn ClaimStore>> {
        let config = MySqlStoreConfig::new().table(self.table.clone());
        Ok(Arc::new(
            MySqlClaimStore::new(self.pool.clone(), config).await?,
        ))
    }

    async fn run(&self, sql: &str) -> Result<()> {
        sqlx::raw_sql(&self.table.render_in(sql, Quotes::BACKTICKS))
            .execute(&self.pool)
            .await
            .map(drop)
            .map_err(|e| OutboxError::Database {
                message: e.to_string(),
                source: None,
            })
    }

    fn expanding_sql(&self) -> (&'static str, &'static str) {
        (
            "ALTER TABLE {table} ADD COLUMN note TEXT NULL",
            "ALTER TABLE {table} DROP COLUMN note",
        )
    }

    fn earlier_bookkeeping_sql(&self) -> &'static str {
        "ALTER TABLE `{name}_migrations` DROP COLUMN oldest_compatible, DROP COLUMN checksum"
    }
}
