//! The SQL Server schema: numbered migrations the host applies explicitly.

use futures_util::io::{AsyncRead, AsyncWrite};
use outbox_core::store_kit::{Migrate, Migrator};
use outbox_core::{async_trait, Migration, Result, TableName};
use tiberius::{Client, Row};

use crate::error::map_err;
use crate::table::render;

static MIGRATIONS: [Migration; 3] = [
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
    Migration {
        version: 3,
        name: "shared_claim_starts",
        up: include_str!("../migrations/0003_shared_claim_starts.up.sql"),
        down: include_str!("../migrations/0003_shared_claim_starts.down.sql"),
    },
];

/// The SQL Server schema and its bookkeeping, for the core's migrator.
static MIGRATOR: Migrator = Migrator {
    migrations: &MIGRATIONS,
    create_bookkeeping: include_str!("../sql/migrations/create_bookkeeping.sql"),
    recorded_version: include_str!("../sql/migrations/recorded_version.sql"),
    record: include_str!("../sql/migrations/record.sql"),
    drop_bookkeeping: include_str!("../sql/migrations/drop_bookkeeping.sql"),
    render,
    record_parameters: "@P1, @P2",
    record_literals: |m| format!("{}, N'{}'", m.version, m.name),
    script_frame: (
        "SET XACT_ABORT ON;\nBEGIN TRANSACTION;\n",
        "\nCOMMIT TRANSACTION;\n",
    ),
};

const LOCK: &str = include_str!("../sql/migrations/lock.sql");

/// Every migration, in order.
pub fn migrations() -> &'static [Migration] {
    MIGRATOR.migrations
}

/// The schema version this build of the store requires.
pub fn required_version() -> i64 {
    MIGRATOR.required_version()
}

/// Every migration as one T-SQL script for `table`, in one transaction, for operators
/// who apply schema changes with their own tools (sqlcmd, a deployment pipeline).
pub fn migration_script(table: &TableName) -> String {
    MIGRATOR.script(table)
}

pub(crate) fn schema_version_sql(table: &TableName) -> String {
    render(table, MIGRATOR.recorded_version)
}

/// The version a `recorded_version.sql` result holds.
pub(crate) fn version_of(rows: &[Row]) -> Result<Option<i64>> {
    match rows.first() {
        Some(r) => r.try_get::<i64, _>("version").map_err(map_err),
        None => Ok(None),
    }
}

async fn run<S>(client: &mut Client<S>, sql: &str) -> Result<()>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    let results = client.simple_query(sql).await.map_err(map_err)?;
    results.into_results().await.map(drop).map_err(map_err)
}

/// The client the core's migrator runs on.
struct OnClient<'a, S>(&'a mut Client<S>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send;

#[async_trait]
impl<S> Migrate for OnClient<'_, S>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    async fn begin_locked(&mut self, table: &TableName) -> Result<()> {
        run(self.0, "SET XACT_ABORT ON; BEGIN TRANSACTION;").await?;
        let resource = format!("outbox-migrate:{}", render(table, "{table}"));
        let locked = async {
            let results = self.0.query(LOCK, &[&resource]).await.map_err(map_err)?;
            results.into_results().await.map(drop).map_err(map_err)
        }
        .await;
        if locked.is_err() {
            return self.end(locked).await;
        }
        Ok(())
    }

    async fn run_script(&mut self, sql: &str) -> Result<()> {
        run(self.0, sql).await
    }

    async fn recorded_version(&mut self, sql: &str) -> Result<Option<i64>> {
        let results = self.0.simple_query(sql).await.map_err(map_err)?;
        version_of(&results.into_first_result().await.map_err(map_err)?)
    }

    async fn record(&mut self, sql: &str, m: &Migration) -> Result<()> {
        let results = self
            .0
            .query(sql, &[&m.version, &m.name])
            .await
            .map_err(map_err)?;
        results.into_results().await.map(drop).map_err(map_err)
    }

    async fn end(&mut self, outcome: Result<()>) -> Result<()> {
        match outcome {
            Ok(()) => run(self.0, "COMMIT TRANSACTION;").await,
            Err(e) => {
                // XACT_ABORT has rolled back already unless the error was raised before it.
                let _ = run(self.0, "IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION;").await;
                Err(e)
            }
        }
    }
}

/// Applies the migrations `table` lacks, in one transaction that holds an application
/// lock on the table's name (two hosts migrating at once take turns). Returns the
/// version the schema is at.
pub async fn migrate<S>(client: &mut Client<S>, table: &TableName) -> Result<i64>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    MIGRATOR.migrate(&mut OnClient(client), table).await
}

/// Reverts every migration of `table` and drops its migrations table (test and teardown
/// use; it deletes the outbox and everything in it).
pub async fn migrate_down<S>(client: &mut Client<S>, table: &TableName) -> Result<()>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    MIGRATOR.migrate_down(&mut OnClient(client), table).await
}

/// Fails unless `table` is at [`required_version`].
pub async fn check_schema<S>(client: &mut Client<S>, table: &TableName) -> Result<()>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    let version = OnClient(client)
        .recorded_version(&schema_version_sql(table))
        .await?;
    judge_version(version, table)
}

pub(crate) fn judge_version(found: Option<i64>, table: &TableName) -> Result<()> {
    MIGRATOR.judge(found, &render(table, "{table}"))
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
    fn the_migrator_is_well_formed() {
        MIGRATOR.check().unwrap();
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
