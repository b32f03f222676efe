//! Upgrades and rollbacks on a SQL Server: the shared cases of `outbox_testkit::upgrades`
//! (skipped, loudly, without a server; the statements they run are parsed offline by the
//! crate's own checks).

use std::sync::Arc;

use outbox_core::store_kit::schema::Migrator;
use outbox_core::{async_trait, ClaimStore, OutboxError, Result, TableName};
use outbox_sqlserver::{connect_pool, SqlClient, SqlServerClaimStore, SqlServerStoreConfig};
use outbox_testkit::upgrades::SchemaHarness;
use tokio::sync::Mutex;

use crate::support::SqlServerTestDb;

pub(crate) struct SqlServer {
    client: Mutex<SqlClient>,
    table: TableName,
    db: SqlServerTestDb,
}

pub(crate) async fn harness() -> Option<SqlServer> {
    let db = SqlServerTestDb::create().await?;
    Some(SqlServer {
        client: Mutex::new(db.client().await),
        table: db.table(),
        db,
    })
}

#[async_trait]
impl SchemaHarness for SqlServer {
    fn migrator(&self) -> &'static Migrator {
        outbox_sqlserver::migrator()
    }

    async fn migrate_with(&self, migrator: &Migrator) -> Result<i64> {
        let mut client = self.client.lock().await;
        let mut conn = outbox_sqlserver::migration_connection(&mut client);
        migrator.migrate(&mut conn, &self.table).await
    }

    async fn migrate_down_with(&self, migrator: &Migrator, version: i64) -> Result<()> {
        let mut client = self.client.lock().await;
        let mut conn = outbox_sqlserver::migration_connection(&mut client);
        migrator
            .migrate_down_to(&mut conn, &self.table, version)
            .await
            .map(drop)
    }

    async fn open(&self) -> Result<Arc<dyn ClaimStore>> {
        let pool = connect_pool(self.db.options.clone(), 2).await?;
        let config = SqlServerStoreConfig {
            table: self.table.clone(),
            ..SqlServerStoreConfig::default()
        };
        Ok(Arc::new(SqlServerClaimStore::new(pool, config).await?))
    }

    async fn run(&self, sql: &str) -> Result<()> {
        let sql = self.table.render_in(sql, outbox_core::Quotes::BRACKETS);
        let mut client = self.client.lock().await;
        let stream = client.simple_query(sql).await.map_err(database)?;
        stream.into_results().await.map(drop).map_err(database)
    }

    fn expanding_sql(&self) -> (&'static str, &'static str) {
        (
            "ALTER TABLE {table} ADD note nvarchar(200) NULL;",
            "ALTER TABLE {table} DROP COLUMN note;",
        )
    }

    fn earlier_bookkeeping_sql(&self) -> &'static str {
        "ALTER TABLE {schema_prefix}[{name}_migrations] DROP COLUMN oldest_compatible, checksum;"
    }
}

fn database(e: tiberius::error::Error) -> OutboxError {
    OutboxError::Database {
        message: e.to_string(),
        source: None,
    }
}
