//! Upgrades and rollbacks on a real SQLite file: the shared cases of
//! `outbox_testkit::upgrades`.

use std::sync::Arc;

use outbox_core::store_kit::schema::Migrator;
use outbox_core::{async_trait, ClaimStore, Result, TableName};
use outbox_sqlite::{SqliteClaimStore, SqliteStoreConfig};
use outbox_testkit::upgrades::SchemaHarness;
use sqlx::SqlitePool;

pub(crate) struct Sqlite {
    _dir: tempfile::TempDir,
    pool: SqlitePool,
    table: TableName,
}

pub(crate) async fn harness() -> Option<Sqlite> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("upgrades.db");
    let pool = SqliteClaimStore::open_pool(path.to_str().unwrap(), &SqliteStoreConfig::new())
        .await
        .unwrap();
    Some(Sqlite {
        _dir: dir,
        pool,
        table: TableName::new("events").unwrap(),
    })
}

#[async_trait]
impl SchemaHarness for Sqlite {
    fn migrator(&self) -> &'static Migrator {
        outbox_sqlite::migrator()
    }

    async fn migrate_with(&self, migrator: &Migrator) -> Result<i64> {
        let mut conn = outbox_sqlite::migration_connection(&self.pool);
        migrator.migrate(&mut conn, &self.table).await
    }

    async fn migrate_down_with(&self, migrator: &Migrator, version: i64) -> Result<()> {
        let mut conn = outbox_sqlite::migration_connection(&self.pool);
        migrator
            .migrate_down_to(&mut conn, &self.table, version)
            .await
            .map(drop)
    }

    async fn open(&self) -> Result<Arc<dyn ClaimStore>> {
        let config = SqliteStoreConfig::new().table(self.table.clone());
        Ok(Arc::new(
            SqliteClaimStore::new(self.pool.clone(), config).await?,
        ))
    }

    async fn run(&self, sql: &str) -> Result<()> {
        sqlx::raw_sql(&self.table.render(sql))
            .execute(&self.pool)
            .await
            .map(drop)
            .map_err(|e| outbox_core::OutboxError::Database {
                message: e.to_string(),
                source: None,
            })
    }

    fn expanding_sql(&self) -> (&'static str, &'static str) {
        (
            "ALTER TABLE {table} ADD COLUMN note TEXT;",
            "ALTER TABLE {table} DROP COLUMN note;",
        )
    }

    fn earlier_bookkeeping_sql(&self) -> &'static str {
        "ALTER TABLE {name}_migrations DROP COLUMN oldest_compatible;
         ALTER TABLE {name}_migrations DROP COLUMN checksum;"
    }
}
