//! The SQLite schema: numbered migrations the host applies explicitly.

use outbox_core::{latest_version, Migration, Result, TableName};
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

const MIGRATIONS_TABLE: &str = include_str!("../sql/migrations_table.sql");
const SCHEMA_VERSION: &str = include_str!("../sql/schema_version.sql");
const RECORD_MIGRATION: &str = include_str!("../sql/record_migration.sql");

/// The migrations of the SQLite schema, oldest first.
pub fn migrations() -> &'static [Migration] {
    &MIGRATIONS
}

/// The schema version this build of the store requires.
pub fn required_version() -> i64 {
    latest_version(&MIGRATIONS)
}

/// The whole schema as one SQL script, for hosts that apply migrations with their own tools.
pub fn migration_script(table: &TableName) -> String {
    let mut script = table.render(MIGRATIONS_TABLE);
    for m in &MIGRATIONS {
        script.push_str(&format!("\n-- migration {}: {}\n", m.version, m.name));
        script.push_str(&table.render(m.up));
        script.push_str(&format!(
            "\n{};\n",
            table
                .render(RECORD_MIGRATION)
                .replace("?1, ?2, ?3", &format!("{}, '{}', 0", m.version, m.name))
        ));
    }
    script
}

/// Applies every migration the database does not have yet, each in its own immediate
/// transaction; returns the resulting version. Safe to run concurrently and repeatedly.
pub async fn migrate(pool: &SqlitePool, table: &TableName) -> Result<i64> {
    script(&table.render(MIGRATIONS_TABLE))
        .execute(pool)
        .await
        .map_err(map_err)?;
    for m in &MIGRATIONS {
        let mut tx = WriteTx::begin(pool).await?;
        let applied = apply_if_missing(&mut tx, table, m).await;
        tx.finish(applied).await?;
    }
    Ok(required_version())
}

/// Applies `m` on `conn` (inside the caller's transaction) unless the database has it.
async fn apply_if_missing(
    conn: &mut SqliteConnection,
    table: &TableName,
    m: &Migration,
) -> Result<()> {
    let current: Option<i64> = sqlx::query_scalar(&table.render(SCHEMA_VERSION))
        .fetch_one(&mut *conn)
        .await
        .map_err(map_err)?;
    if current.unwrap_or(0) < m.version {
        script(&table.render(m.up))
            .execute(&mut *conn)
            .await
            .map_err(map_err)?;
        sqlx::query(&table.render(RECORD_MIGRATION))
            .bind(m.version)
            .bind(m.name)
            .bind(chrono::Utc::now().timestamp_micros())
            .execute(&mut *conn)
            .await
            .map_err(map_err)?;
    }
    Ok(())
}

/// A multi-statement script; SQLite runs every statement of it, in order. Not cached.
fn script(sql: &str) -> sqlx::query::Query<'_, sqlx::Sqlite, sqlx::sqlite::SqliteArguments<'_>> {
    sqlx::query(sql).persistent(false)
}

/// Reverts every migration, newest first, and drops the bookkeeping table.
pub async fn migrate_down(pool: &SqlitePool, table: &TableName) -> Result<()> {
    for m in MIGRATIONS.iter().rev() {
        script(&table.render(m.down))
            .execute(pool)
            .await
            .map_err(map_err)?;
    }
    let drop = table.render("DROP TABLE IF EXISTS {schema_prefix}{name}_migrations");
    script(&drop).execute(pool).await.map_err(map_err)?;
    Ok(())
}

/// Fails with a clear error unless the schema is at exactly the required version.
pub async fn check_schema(pool: &SqlitePool, table: &TableName) -> Result<()> {
    let found: Option<i64> = sqlx::query_scalar(&table.render(SCHEMA_VERSION))
        .fetch_one(pool)
        .await
        .map_err(map_err)?;
    outbox_core::judge_schema_version(found, required_version(), &table.qualified())
}
