//! The SQL Server schema: numbered migrations the host applies explicitly.

use futures_util::io::{AsyncRead, AsyncWrite};
use outbox_core::{latest_version, Migration, Result, TableName};
use tiberius::{Client, Row};

use crate::error::map_err;
use crate::table::render;

static MIGRATIONS: [Migration; 2] = [
    Migration {
        version: 1,
        name: "create_outbox",
        up: include_str!("../migrations/0001_create_outbox.up.sql"),
        down: include_str!("../migrations/0001_create_outbox.down.sql"),
    },
    Migration {
        version: 2,
        name: "keys_and_slices",
        up: include_str!("../migrations/0002_keys_and_slices.up.sql"),
        down: include_str!("../migrations/0002_keys_and_slices.down.sql"),
    },
];

const MIGRATIONS_TABLE: &str = include_str!("../sql/migrations_table.sql");
const SCHEMA_VERSION: &str = include_str!("../sql/schema_version.sql");
const RECORD_MIGRATION: &str = include_str!("../sql/record_migration.sql");
const MIGRATION_LOCK: &str = include_str!("../sql/migration_lock.sql");

/// Every migration, in order.
pub fn migrations() -> &'static [Migration] {
    &MIGRATIONS
}

/// The schema version this build of the store requires.
pub fn required_version() -> i64 {
    latest_version(&MIGRATIONS)
}

/// Every migration as one T-SQL script for `table`, in one transaction, for operators
/// who apply schema changes with their own tools (sqlcmd, a deployment pipeline).
pub fn migration_script(table: &TableName) -> String {
    let mut script = String::from("SET XACT_ABORT ON;\nBEGIN TRANSACTION;\n");
    script.push_str(&render(table, MIGRATIONS_TABLE));
    for m in &MIGRATIONS {
        script.push_str(&format!("\n-- migration {}: {}\n", m.version, m.name));
        script.push_str(&render(table, m.up));
        script.push_str(&render(
            table,
            &RECORD_MIGRATION.replace("@P1, @P2", &format!("{}, N'{}'", m.version, m.name)),
        ));
    }
    script.push_str("\nCOMMIT TRANSACTION;\n");
    script
}

pub(crate) fn schema_version_sql(table: &TableName) -> String {
    render(table, SCHEMA_VERSION)
}

/// The version a `schema_version.sql` result holds.
pub(crate) fn version_of(rows: &[Row]) -> Result<Option<i64>> {
    match rows.first() {
        Some(r) => r.try_get::<i64, _>("version").map_err(map_err),
        None => Ok(None),
    }
}

async fn run<S>(
    client: &mut Client<S>,
    sql: &str,
) -> std::result::Result<(), tiberius::error::Error>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    client
        .simple_query(sql)
        .await?
        .into_results()
        .await
        .map(drop)
}

/// Applies the migrations `table` lacks, in one transaction that holds an application
/// lock on the table's name (two hosts migrating at once take turns). Returns the
/// version the schema is at.
pub async fn migrate<S>(client: &mut Client<S>, table: &TableName) -> Result<i64>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    let steps = async {
        run(client, "SET XACT_ABORT ON; BEGIN TRANSACTION;").await?;
        let resource = format!("outbox-migrate:{}", render(table, "{table}"));
        client
            .query(MIGRATION_LOCK, &[&resource])
            .await?
            .into_results()
            .await?;
        run(client, &render(table, MIGRATIONS_TABLE)).await?;
        let rows = client
            .simple_query(schema_version_sql(table))
            .await?
            .into_first_result()
            .await?;
        let current = rows
            .first()
            .map(|r| r.try_get::<i64, _>("version"))
            .transpose()?
            .flatten()
            .unwrap_or(0);
        for m in MIGRATIONS.iter().filter(|m| m.version > current) {
            run(client, &render(table, m.up)).await?;
            client
                .query(render(table, RECORD_MIGRATION), &[&m.version, &m.name])
                .await?
                .into_results()
                .await?;
        }
        run(client, "COMMIT TRANSACTION;").await
    };
    if let Err(e) = steps.await {
        // XACT_ABORT has rolled back already unless the error was raised before it.
        let _ = run(client, "IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION;").await;
        return Err(map_err(e));
    }
    Ok(required_version())
}

/// Reverts every migration of `table` and drops its migrations table (test and teardown
/// use; it deletes the outbox and everything in it).
pub async fn migrate_down<S>(client: &mut Client<S>, table: &TableName) -> Result<()>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    let mut script = String::from("SET XACT_ABORT ON; BEGIN TRANSACTION;\n");
    for m in MIGRATIONS.iter().rev() {
        script.push_str(&render(table, m.down));
        script.push('\n');
    }
    script.push_str(&render(
        table,
        "DROP TABLE IF EXISTS {migrations};\nCOMMIT TRANSACTION;",
    ));
    run(client, &script).await.map_err(map_err)
}

/// Fails unless `table` is at [`required_version`].
pub async fn check_schema<S>(client: &mut Client<S>, table: &TableName) -> Result<()>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    let rows = client
        .simple_query(schema_version_sql(table))
        .await
        .map_err(map_err)?
        .into_first_result()
        .await
        .map_err(map_err)?;
    judge_version(version_of(&rows)?, table)
}

pub(crate) fn judge_version(found: Option<i64>, table: &TableName) -> Result<()> {
    outbox_core::judge_schema_version(found, required_version(), &render(table, "{table}"))
}

#[cfg(test)]
mod tests {
    use outbox_core::OutboxError;

    use super::*;

    #[test]
    fn the_script_applies_every_migration_in_one_transaction_and_records_it() {
        let table = TableName::in_schema("app", "events").unwrap();
        let script = migration_script(&table);
        assert!(script.starts_with("SET XACT_ABORT ON;\nBEGIN TRANSACTION;"));
        assert!(script.trim_end().ends_with("COMMIT TRANSACTION;"));
        assert!(script.contains("CREATE TABLE [app].[events]"));
        assert!(script.contains(
            "INSERT INTO [app].[events_migrations] (version, name) VALUES (1, N'create_outbox');"
        ));
        assert!(!script.contains('{'), "unrendered placeholder: {script}");
        assert!(!script.contains("@P"), "a parameter in a script: {script}");
    }

    #[test]
    fn versions_are_judged() {
        let t = TableName::default();
        assert!(matches!(
            judge_version(None, &t),
            Err(OutboxError::SchemaNotMigrated { .. })
        ));
        assert!(matches!(
            judge_version(Some(99), &t),
            Err(OutboxError::SchemaVersionMismatch { .. })
        ));
        judge_version(Some(required_version()), &t).unwrap();
    }

    #[test]
    fn every_migration_has_a_down() {
        for m in migrations() {
            assert!(m.down.contains("DROP"), "{}", m.name);
        }
    }
}
