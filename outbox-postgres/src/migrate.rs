//! The PostgreSQL schema: numbered migrations the host applies explicitly.

use outbox_core::{latest_version, Migration, OutboxError, Result, TableName};
use tokio_postgres::Client;

static MIGRATIONS: [Migration; 6] = [
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
];

const MIGRATIONS_TABLE: &str = include_str!("../sql/migrations_table.sql");
pub(crate) const SCHEMA_VERSION: &str = include_str!("../sql/schema_version.sql");
const RECORD_MIGRATION: &str = include_str!("../sql/record_migration.sql");

/// The migrations of the PostgreSQL schema, oldest first.
pub fn migrations() -> &'static [Migration] {
    &MIGRATIONS
}

/// The schema version this build of the store requires.
pub fn required_version() -> i64 {
    latest_version(&MIGRATIONS)
}

/// The whole schema as one SQL script, for hosts that apply migrations with their own tools.
pub fn migration_script(table: &TableName) -> String {
    let mut script = String::from("BEGIN;\n");
    script.push_str(&table.render(MIGRATIONS_TABLE));
    for m in &MIGRATIONS {
        script.push_str(&format!("\n-- migration {}: {}\n", m.version, m.name));
        script.push_str(&table.render(m.up));
        script.push_str(&format!(
            "\n{};\n",
            table
                .render(RECORD_MIGRATION)
                .replace("$1, $2", &format!("{}, '{}'", m.version, m.name))
        ));
    }
    script.push_str("COMMIT;\n");
    script
}

fn db_err(e: tokio_postgres::Error) -> OutboxError {
    crate::error::map_err(e)
}

/// Applies every migration the database does not have yet in one transaction, serialized
/// against concurrent migrators by an advisory lock; returns the resulting version.
pub async fn migrate(client: &mut Client, table: &TableName) -> Result<i64> {
    let tx = client.transaction().await.map_err(db_err)?;
    // One lock per qualified table name, so two hosts migrating at once take turns.
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtext($1))",
        &[&table.qualified()],
    )
    .await
    .map_err(db_err)?;
    tx.batch_execute(&table.render(MIGRATIONS_TABLE))
        .await
        .map_err(db_err)?;
    let current: Option<i64> = tx
        .query_one(&table.render(SCHEMA_VERSION), &[])
        .await
        .map_err(db_err)?
        .get(0);
    for m in MIGRATIONS
        .iter()
        .filter(|m| m.version > current.unwrap_or(0))
    {
        tx.batch_execute(&table.render(m.up))
            .await
            .map_err(db_err)?;
        tx.execute(&table.render(RECORD_MIGRATION), &[&m.version, &m.name])
            .await
            .map_err(db_err)?;
    }
    tx.commit().await.map_err(db_err)?;
    Ok(required_version())
}

/// Reverts every migration, newest first, and drops the bookkeeping table.
pub async fn migrate_down(client: &mut Client, table: &TableName) -> Result<()> {
    let tx = client.transaction().await.map_err(db_err)?;
    for m in MIGRATIONS.iter().rev() {
        tx.batch_execute(&table.render(m.down))
            .await
            .map_err(db_err)?;
    }
    tx.batch_execute(&table.render("DROP TABLE IF EXISTS {schema_prefix}\"{name}_migrations\""))
        .await
        .map_err(db_err)?;
    tx.commit().await.map_err(db_err)
}

/// Fails with a clear error unless the schema is at exactly the required version.
pub async fn check_schema(client: &Client, table: &TableName) -> Result<()> {
    let found: Option<i64> = client
        .query_one(&table.render(SCHEMA_VERSION), &[])
        .await
        .map_err(db_err)?
        .get(0);
    judge_version(found, table)
}

/// Judges the version the schema-version query found.
pub(crate) fn judge_version(found: Option<i64>, table: &TableName) -> Result<()> {
    outbox_core::judge_schema_version(found, required_version(), &table.qualified())
}
