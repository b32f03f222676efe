//! Upgrades and rollbacks on the test PostgreSQL server: the shared cases of
//! `outbox_testkit::upgrades`.

use std::sync::Arc;

use outbox_core::store_kit::schema::Migrator;
use outbox_core::{async_trait, ClaimStore, Result, TableName};
use outbox_postgres::{PgClaimStore, PgStoreConfig};
use outbox_testkit::postgres::PgTestDb;
use outbox_testkit::upgrades::SchemaHarness;
use tokio::sync::Mutex;

use crate::support;

pub(crate) struct Postgres {
    db: PgTestDb,
    client: Mutex<tokio_postgres::Client>,
    table: TableName,
}

pub(crate) async fn harness() -> Option<Postgres> {
    let db = PgTestDb::create().await?;
    let client = Mutex::new(db.connect().await);
    let table = support::table(&db);
    Some(Postgres { db, client, table })
}

#[async_trait]
impl SchemaHarness for Postgres {
    fn migrator(&self) -> &'static Migrator {
        outbox_postgres::migrator()
    }

    async fn migrate_with(&self, migrator: &Migrator) -> Result<i64> {
        let mut client = self.client.lock().await;
        let mut conn = outbox_postgres::migration_connection(&mut client).await?;
        migrator.migrate(&mut conn, &self.table).await
    }

    async fn migrate_down_with(&self, migrator: &Migrator, version: i64) -> Result<()> {
        let mut client = self.client.lock().await;
        let mut conn = outbox_postgres::migration_connection(&mut client).await?;
        migrator
            .migrate_down_to(&mut conn, &self.table, version)
            .await
            .map(drop)
    }

    async fn open(&self) -> Result<Arc<dyn ClaimStore>> {
        let pool = support::pool(support::pg_config(&self.db.url, &self.db.schema), 2);
        let config = PgStoreConfig::new().table(self.table.clone());
        Ok(Arc::new(PgClaimStore::new(pool, config).await?))
    }

    async fn run(&self, sql: &str) -> Result<()> {
        self.client
            .lock()
            .await
            .batch_execute(&self.table.render(sql))
            .await
            .map_err(|e| outbox_core::OutboxError::Database {
                message: e.to_string(),
                source: None,
            })
    }

    fn expanding_sql(&self) -> (&'static str, &'static str) {
        (
            "ALTER TABLE {table} ADD COLUMN note text;",
            "ALTER TABLE {table} DROP COLUMN note;",
        )
    }

    fn earlier_bookkeeping_sql(&self) -> &'static str {
        "ALTER TABLE {schema_prefix}\"{name}_migrations\"
             DROP COLUMN oldest_compatible, DROP COLUMN checksum;"
    }
}
