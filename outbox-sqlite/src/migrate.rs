//! The SQLite schema: numbered migrations the host applies explicitly.

use outbox_core::store_kit::{Migrate, Migrator};
use outbox_core::{async_trait, Migration, OutboxError, Result, TableName};
use sqlx::{SqliteConnection, SqlitePool};

use crate::connection::WriteTx;
use crate::error::map_err;

static MIGRATIONS: [Migration; 4] = [
    Migration {
        version: 1,
        name: "create_outbox",
        up: include_str!("../migrations/0001_create_outbox.up.sql"),
        down: include_str!("../migrations/0001_create_outbox.down.sql"),
    },
    Migration {
        version: 2,
        name: "rowid_table",
        up: include_str!("../migrations/0002_rowid_table.up.sql"),
        down: include_str!("../migrations/0002_rowid_table.down.sql"),
    },
    Migration {
        version: 3,
        name: "key_heads",
        up: include_str!("../migrations/0003_key_heads.up.sql"),
        down: include_str!("../migrations/0003_key_heads.down.sql"),
    },
    Migration {
        version: 4,
        name: "slice_hash",
        up: include_str!("../migrations/0004_slice_hash.up.sql"),
        down: include_str!("../migrations/0004_slice_hash.down.sql"),
    },
];

/// The SQLite schema and its bookkeeping, for the core's migrator.
static MIGRATOR: Migrator = Migrator {
    migrations: &MIGRATIONS,
    create_bookkeeping: include_str!("../sql/migrations/create_bookkeeping.sql"),
    recorded_version: RECORDED_VERSION,
    record: include_str!("../sql/migrations/record.sql"),
    drop_bookkeeping: include_str!("../sql/migrations/drop_bookkeeping.sql"),
    render: TableName::render,
    record_parameters: "?1, ?2, ?3",
    record_literals: |m| format!("{}, '{}', 0", m.version, m.name),
    script_frame: ("", ""),
};

const RECORDED_VERSION: &str = include_str!("../sql/migrations/recorded_version.sql");

/// The migrations of the SQLite schema, oldest first.
pub fn migrations() -> &'static [Migration] {
    MIGRATOR.migrations
}

/// The schema version this build of the store requires.
pub fn required_version() -> i64 {
    MIGRATOR.required_version()
}

/// The whole schema as one SQL script, for hosts that apply migrations with their own tools.
pub fn migration_script(table: &TableName) -> String {
    MIGRATOR.script(table)
}

/// The pool the core's migrator runs on, and the immediate transaction (SQLite's write
/// lock, which makes concurrent migrators take turns) it holds while it runs.
struct OnPool<'a> {
    pool: &'a SqlitePool,
    tx: Option<WriteTx>,
}

impl OnPool<'_> {
    fn tx(&mut self) -> Result<&mut SqliteConnection> {
        match self.tx.as_mut() {
            Some(tx) => Ok(&mut **tx),
            None => Err(OutboxError::Database {
                message: "the migration transaction has not begun".into(),
                source: None,
            }),
        }
    }
}

#[async_trait]
impl Migrate for OnPool<'_> {
    async fn begin_locked(&mut self, _table: &TableName) -> Result<()> {
        self.tx = Some(WriteTx::begin(self.pool).await?);
        Ok(())
    }

    async fn run_script(&mut self, sql: &str) -> Result<()> {
        script(sql)
            .execute(self.tx()?)
            .await
            .map(drop)
            .map_err(map_err)
    }

    async fn recorded_version(&mut self, sql: &str) -> Result<Option<i64>> {
        sqlx::query_scalar(sql)
            .fetch_one(self.tx()?)
            .await
            .map_err(map_err)
    }

    async fn record(&mut self, sql: &str, m: &Migration) -> Result<()> {
        sqlx::query(sql)
            .bind(m.version)
            .bind(m.name)
            .bind(chrono::Utc::now().timestamp_micros())
            .execute(self.tx()?)
            .await
            .map(drop)
            .map_err(map_err)
    }

    async fn end(&mut self, outcome: Result<()>) -> Result<()> {
        match self.tx.take() {
            Some(tx) => tx.finish(outcome).await,
            None => outcome,
        }
    }
}

/// A multi-statement script; SQLite runs every statement of it, in order. Not cached.
fn script(sql: &str) -> sqlx::query::Query<'_, sqlx::Sqlite, sqlx::sqlite::SqliteArguments<'_>> {
    sqlx::query(sql).persistent(false)
}

/// Applies every migration the database does not have yet, in one immediate transaction;
/// returns the resulting version. Safe to run concurrently and repeatedly.
pub async fn migrate(pool: &SqlitePool, table: &TableName) -> Result<i64> {
    MIGRATOR
        .migrate(&mut OnPool { pool, tx: None }, table)
        .await
}

/// Reverts every migration, newest first, and drops the bookkeeping table.
pub async fn migrate_down(pool: &SqlitePool, table: &TableName) -> Result<()> {
    MIGRATOR
        .migrate_down(&mut OnPool { pool, tx: None }, table)
        .await
}

/// Fails with a clear error unless the schema is at exactly the required version.
pub async fn check_schema(pool: &SqlitePool, table: &TableName) -> Result<()> {
    let found: Option<i64> = sqlx::query_scalar(&table.render(RECORDED_VERSION))
        .fetch_one(pool)
        .await
        .map_err(map_err)?;
    MIGRATOR.judge(found, &table.qualified())
}
