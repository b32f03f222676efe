//! The PostgreSQL schema: numbered migrations the host applies explicitly.

use outbox_core::store_kit::{Migrate, Migrator};
use outbox_core::{async_trait, Migration, OutboxError, Result, TableName};
use tokio_postgres::{Client, Transaction};

use crate::typed::typed;

static MIGRATIONS: [Migration; 8] = [
    Migration {
        version: 1,
        name: "create_outbox",
        up: include_str!("../migrations/0001_create_outbox.up.sql"),
        down: include_str!("../migrations/0001_create_outbox.down.sql"),
    },
    Migration {
        version: 2,
        name: "claim_function",
        up: include_str!("../migrations/0002_claim_function.up.sql"),
        down: include_str!("../migrations/0002_claim_function.down.sql"),
    },
    Migration {
        version: 3,
        name: "plans_without_statistics",
        up: include_str!("../migrations/0003_plans_without_statistics.up.sql"),
        down: include_str!("../migrations/0003_plans_without_statistics.down.sql"),
    },
    Migration {
        version: 4,
        name: "key_heads",
        up: include_str!("../migrations/0004_key_heads.up.sql"),
        down: include_str!("../migrations/0004_key_heads.down.sql"),
    },
    Migration {
        version: 5,
        name: "slices",
        up: include_str!("../migrations/0005_slices.up.sql"),
        down: include_str!("../migrations/0005_slices.down.sql"),
    },
    Migration {
        version: 6,
        name: "claim_from_head",
        up: include_str!("../migrations/0006_claim_from_head.up.sql"),
        down: include_str!("../migrations/0006_claim_from_head.down.sql"),
    },
    Migration {
        version: 7,
        name: "shared_claim_starts",
        up: include_str!("../migrations/0007_shared_claim_starts.up.sql"),
        down: include_str!("../migrations/0007_shared_claim_starts.down.sql"),
    },
    Migration {
        version: 8,
        name: "claim_limits_at_least_zero",
        up: include_str!("../migrations/0008_claim_limits_at_least_zero.up.sql"),
        down: include_str!("../migrations/0008_claim_limits_at_least_zero.down.sql"),
    },
];

/// The PostgreSQL schema and its bookkeeping, for the core's migrator.
static MIGRATOR: Migrator = Migrator {
    migrations: &MIGRATIONS,
    create_bookkeeping: include_str!("../sql/migrations/create_bookkeeping.sql"),
    recorded_version: RECORDED_VERSION,
    record: include_str!("../sql/migrations/record.sql"),
    drop_bookkeeping: include_str!("../sql/migrations/drop_bookkeeping.sql"),
    render: TableName::render,
    record_parameters: "$1, $2",
    record_literals: |m| format!("{}, '{}'", m.version, m.name),
    script_frame: ("BEGIN;\n", "COMMIT;\n"),
};

pub(crate) const RECORDED_VERSION: &str = include_str!("../sql/migrations/recorded_version.sql");
const LOCK: &str = include_str!("../sql/migrations/lock.sql");

/// The migrations of the PostgreSQL schema, oldest first.
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

fn db_err(e: tokio_postgres::Error) -> OutboxError {
    crate::error::map_err(e)
}

/// A transaction the core's migrator runs on; dropped before its end, it rolls back.
struct OnTransaction<'a>(Option<Transaction<'a>>);

impl<'a> OnTransaction<'a> {
    fn tx(&self) -> Result<&Transaction<'a>> {
        self.0.as_ref().ok_or_else(|| OutboxError::Database {
            message: "the migration transaction has ended".into(),
            source: None,
        })
    }
}

#[async_trait]
impl Migrate for OnTransaction<'_> {
    async fn begin_locked(&mut self, table: &TableName) -> Result<()> {
        self.tx()?
            .execute_typed(LOCK, &[typed(&table.qualified())])
            .await
            .map(drop)
            .map_err(db_err)
    }

    async fn run_script(&mut self, sql: &str) -> Result<()> {
        self.tx()?.batch_execute(sql).await.map_err(db_err)
    }

    async fn recorded_version(&mut self, sql: &str) -> Result<Option<i64>> {
        Ok(self
            .tx()?
            .query_typed_one(sql, &[])
            .await
            .map_err(db_err)?
            .get(0))
    }

    async fn record(&mut self, sql: &str, m: &Migration) -> Result<()> {
        self.tx()?
            .execute_typed(sql, &[typed(&m.version), typed(&m.name)])
            .await
            .map(drop)
            .map_err(db_err)
    }

    async fn end(&mut self, outcome: Result<()>) -> Result<()> {
        let tx = self.0.take();
        match (outcome, tx) {
            (Ok(()), Some(tx)) => tx.commit().await.map_err(db_err),
            // Dropping the transaction rolls it back.
            (outcome, _) => outcome,
        }
    }
}

/// Applies every migration the database does not have yet in one transaction, serialized
/// against concurrent migrators by an advisory lock; returns the resulting version.
pub async fn migrate(client: &mut Client, table: &TableName) -> Result<i64> {
    let tx = client.transaction().await.map_err(db_err)?;
    MIGRATOR.migrate(&mut OnTransaction(Some(tx)), table).await
}

/// Reverts every migration, newest first, and drops the bookkeeping table.
pub async fn migrate_down(client: &mut Client, table: &TableName) -> Result<()> {
    let tx = client.transaction().await.map_err(db_err)?;
    MIGRATOR
        .migrate_down(&mut OnTransaction(Some(tx)), table)
        .await
}

/// Fails with a clear error unless the schema is at exactly the required version.
///
/// Its statement is sent unnamed, as every statement of the migrations is: both work
/// through a transaction-mode pooler.
pub async fn check_schema(client: &Client, table: &TableName) -> Result<()> {
    let found: Option<i64> = client
        .query_typed_one(&table.render(RECORDED_VERSION), &[])
        .await
        .map_err(db_err)?
        .get(0);
    judge_version(found, table)
}

/// Judges the version the schema-version query found.
pub(crate) fn judge_version(found: Option<i64>, table: &TableName) -> Result<()> {
    MIGRATOR.judge(found, &table.qualified())
}
