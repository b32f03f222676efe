//! The SQL Server schema: numbered migrations the host applies explicitly.

use futures_util::io::{AsyncRead, AsyncWrite};
use outbox_core::store_kit::schema::{
    Bookkeeping, Definition, Definitions, Migrate, Migrator, ReadSchema, RecordedDefinition,
};
use outbox_core::{async_trait, Migration, Result, TableName};
use tiberius::{Client, Row};

use crate::error::map_err;
use crate::table::render;

static MIGRATIONS: [Migration; 4] = [
    Migration::new(
        1,
        "create_outbox",
        include_str!("../migrations/0001_create_outbox.up.sql"),
        include_str!("../migrations/0001_create_outbox.down.sql"),
    ),
    Migration::new(
        2,
        "keys_and_slices",
        include_str!("../migrations/0002_keys_and_slices.up.sql"),
        include_str!("../migrations/0002_keys_and_slices.down.sql"),
    ),
    Migration::new(
        3,
        "shared_claim_starts",
        include_str!("../migrations/0003_shared_claim_starts.up.sql"),
        include_str!("../migrations/0003_shared_claim_starts.down.sql"),
    ),
    Migration::new(
        4,
        "operator_reads",
        include_str!("../migrations/0004_operator_reads.up.sql"),
        include_str!("../migrations/0004_operator_reads.down.sql"),
    )
    .compatible_from(3),
];

/// The stored functions, each in one file of definitions/, applied after the migrations.
static DEFINITIONS: [Definition; 1] = [Definition {
    name: "slice_hash",
    revision: 1,
    sql: include_str!("../definitions/slice_hash.sql"),
}];

/// A definition as one statement of a printed script, which runs as one batch: CREATE OR
/// ALTER FUNCTION must open a batch of its own, so it runs through EXEC, its comment lines
/// left out and its quotes doubled.
fn in_exec(sql: &str) -> String {
    let statement: Vec<&str> = sql
        .lines()
        .skip_while(|l| l.trim_start().starts_with("--") || l.trim().is_empty())
        .collect();
    format!(
        "EXEC (N'\n{}\n');",
        statement.join("\n").replace('\'', "''")
    )
}

/// The SQL Server schema and its bookkeeping, for the core's migrator.
static MIGRATOR: Migrator = Migrator::new(
    &MIGRATIONS,
    Bookkeeping {
        create: include_str!("../sql/migrations/create_bookkeeping.sql"),
        columns: include_str!("../sql/migrations/bookkeeping_columns.sql"),
        add_columns: include_str!("../sql/migrations/add_bookkeeping_columns.sql"),
        version: include_str!("../sql/migrations/recorded_version.sql"),
        window: include_str!("../sql/migrations/recorded_window.sql"),
        applied: include_str!("../sql/migrations/applied.sql"),
        record: include_str!("../sql/migrations/record.sql"),
        forget: include_str!("../sql/migrations/forget.sql"),
        drop: include_str!("../sql/migrations/drop_bookkeeping.sql"),
    },
    render,
    "@P1, @P2, @P3, @P4",
    |m| m.record_literals("N"),
)
.with_definitions(Definitions {
    list: &DEFINITIONS,
    create: include_str!("../sql/migrations/create_definitions.sql"),
    recorded: include_str!("../sql/migrations/recorded_definitions.sql"),
    record: include_str!("../sql/migrations/record_definition.sql"),
    record_parameters: "@P1, @P2, @P3",
    record_literals: |d| format!("N'{}', {}, N'{}'", d.name, d.revision, d.checksum()),
    script_form: in_exec,
    drop: include_str!("../sql/migrations/drop_definitions.sql"),
})
.with_script_frame(
    "SET XACT_ABORT ON;\nBEGIN TRANSACTION;\n",
    "\nCOMMIT TRANSACTION;\n",
);

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

/// The first row's two integer columns, as [`ReadSchema::pair`] returns them.
pub(crate) fn pair_of(rows: &[Row]) -> Result<(Option<i64>, Option<i64>)> {
    match rows.first() {
        Some(r) => Ok((
            r.try_get::<i64, _>(0).map_err(map_err)?,
            r.try_get::<i64, _>(1).map_err(map_err)?,
        )),
        None => Ok((None, None)),
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
impl<S> ReadSchema for OnClient<'_, S>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    async fn pair(&mut self, sql: &str) -> Result<(Option<i64>, Option<i64>)> {
        let results = self.0.simple_query(sql).await.map_err(map_err)?;
        pair_of(&results.into_first_result().await.map_err(map_err)?)
    }
}

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

    async fn applied(&mut self, sql: &str) -> Result<Vec<(i64, Option<String>)>> {
        let results = self.0.simple_query(sql).await.map_err(map_err)?;
        let rows = results.into_first_result().await.map_err(map_err)?;
        rows.iter()
            .map(|r| {
                let version = r.try_get::<i64, _>(0).map_err(map_err)?.unwrap_or_default();
                let checksum = r.try_get::<&str, _>(1).map_err(map_err)?;
                Ok((version, checksum.map(str::to_owned)))
            })
            .collect()
    }

    async fn record(&mut self, sql: &str, m: &Migration, checksum: &str) -> Result<()> {
        let results = self
            .0
            .query(sql, &[&m.version, &m.name, &m.oldest_compatible, &checksum])
            .await
            .map_err(map_err)?;
        results.into_results().await.map(drop).map_err(map_err)
    }

    async fn recorded_definitions(&mut self, sql: &str) -> Result<Vec<RecordedDefinition>> {
        let results = self.0.simple_query(sql).await.map_err(map_err)?;
        let rows = results.into_first_result().await.map_err(map_err)?;
        rows.iter()
            .map(|r| {
                let text = |i: usize| -> Result<String> {
                    Ok(r.try_get::<&str, _>(i)
                        .map_err(map_err)?
                        .unwrap_or_default()
                        .to_owned())
                };
                Ok(RecordedDefinition {
                    name: text(0)?,
                    revision: r.try_get::<i64, _>(1).map_err(map_err)?.unwrap_or_default(),
                    checksum: text(2)?,
                })
            })
            .collect()
    }

    async fn record_definition(&mut self, sql: &str, d: &Definition, checksum: &str) -> Result<()> {
        let results = self
            .0
            .query(sql, &[&d.name, &d.revision, &checksum])
            .await
            .map_err(map_err)?;
        results.into_results().await.map(drop).map_err(map_err)
    }

    async fn forget(&mut self, sql: &str, version: i64) -> Result<()> {
        let results = self.0.query(sql, &[&version]).await.map_err(map_err)?;
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

/// The migrations of the SQL Server schema and their bookkeeping, for tools that run them
/// through the core's [`Migrator`] (a host extending the schema, a test playing a later
/// release) on a [`migration_connection`].
pub fn migrator() -> &'static Migrator {
    &MIGRATOR
}

/// `client` as the core's [`Migrator`] applies and reverts migrations on it, in one
/// transaction per run that holds an application lock on the table's name.
pub fn migration_connection<S>(client: &mut Client<S>) -> impl Migrate + '_
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    OnClient(client)
}

/// Applies the migrations `table` lacks, in one transaction that holds an application
/// lock on the table's name (two hosts migrating at once take turns). Returns the
/// version the schema is at.
pub async fn migrate<S>(client: &mut Client<S>, table: &TableName) -> Result<i64>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    MIGRATOR
        .migrate(&mut migration_connection(client), table)
        .await
}

/// Reverts every migration of `table` and drops its migrations table (test and teardown
/// use; it deletes the outbox and everything in it).
pub async fn migrate_down<S>(client: &mut Client<S>, table: &TableName) -> Result<()>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    migrate_down_to(client, table, 0).await.map(drop)
}

/// Reverts the migrations newer than `version`, newest first, in one transaction, keeping
/// the rows (`0`: every migration, and the outbox with them). Refuses, changing nothing, a
/// migration on the way that cannot be reverted.
pub async fn migrate_down_to<S>(
    client: &mut Client<S>,
    table: &TableName,
    version: i64,
) -> Result<i64>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    MIGRATOR
        .migrate_down_to(&mut migration_connection(client), table, version)
        .await
}

/// Fails with a clear error unless a store of this build runs on the schema: at its
/// version, or newer inside its compatibility window (see
/// [`Migration::compatible_from`]).
pub async fn check_schema<S>(client: &mut Client<S>, table: &TableName) -> Result<()>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    check_schema_on(&mut migration_connection(client), table).await
}

/// The schema facts of `table` read through `reader`, judged as [`check_schema`] does.
pub(crate) async fn check_schema_on<R: ReadSchema + ?Sized>(
    reader: &mut R,
    table: &TableName,
) -> Result<()> {
    MIGRATOR
        .check_schema(reader, table, &render(table, "{table}"))
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_applies_every_migration_in_one_transaction_and_records_it() {
        let table = TableName::in_schema("app", "events").unwrap();
        let script = migration_script(&table);
        assert!(script.starts_with("SET XACT_ABORT ON;\nBEGIN TRANSACTION;"));
        assert!(script.trim_end().ends_with("COMMIT TRANSACTION;"));
        assert!(script.contains("CREATE TABLE [app].[events]"));
        assert!(script.contains(&format!(
            "USING (VALUES (1, N'create_outbox', 1, N'{}'))",
            migrations()[0].checksum()
        )));
        assert!(!script.contains('{'), "unrendered placeholder: {script}");
        assert!(!script.contains("@P"), "a parameter in a script: {script}");
    }

    /// The slice hash definition is the function migration 2 creates, word for word: a
    /// table migrated before definitions and one migrated since have the same function.
    /// In a printed script it runs through EXEC, quote-free, after every migration.
    #[test]
    fn the_slice_hash_definition_is_the_function_of_migration_2() {
        let migration = include_str!("../migrations/0002_keys_and_slices.up.sql");
        let start = migration.find("EXEC (N'\n").unwrap() + "EXEC (N'\n".len();
        let end = migration[start..].find("\n');").unwrap() + start;
        let created = &migration[start..end];
        let defined = DEFINITIONS[0]
            .sql
            .lines()
            .skip_while(|l| l.starts_with("--"))
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(
            defined.trim_end(),
            created.replacen("CREATE FUNCTION", "CREATE OR ALTER FUNCTION", 1)
        );
        let script = migration_script(&TableName::in_schema("app", "events").unwrap());
        let wrapped = in_exec(&render(
            &TableName::in_schema("app", "events").unwrap(),
            DEFINITIONS[0].sql,
        ));
        assert!(wrapped.starts_with("EXEC (N'\nCREATE OR ALTER FUNCTION [app].[events_slice_hash]"));
        assert!(wrapped.ends_with("\n');"));
        let inner = &wrapped["EXEC (N'".len()..wrapped.len() - "');".len()];
        assert!(!inner.contains('\''), "{inner}");
        let at = script.find(&wrapped).expect("the definition in the script");
        assert!(at > script.find("-- migration 3:").unwrap());
        assert!(script.contains(&format!(
            "USING (VALUES (N'slice_hash', 1, N'{}'))",
            DEFINITIONS[0].checksum()
        )));
    }

    /// The definition's revision with the checksum of its SQL at that revision: a file
    /// edited without raising its revision fails here, before a database refuses it.
    #[test]
    fn every_definition_change_raises_its_revision() {
        let pinned = [(
            "slice_hash",
            1,
            "21517582264bf4a084d1c8d4550d73f2dbd02c9fb91261128e97008d5b854f03",
        )];
        assert_eq!(DEFINITIONS.len(), pinned.len());
        for (d, (name, revision, checksum)) in DEFINITIONS.iter().zip(pinned) {
            assert_eq!(
                (d.name, d.revision, d.checksum().as_str()),
                (name, revision, checksum),
                "definitions/{name}.sql changed: raise its revision and pin its new checksum"
            );
        }
    }

    #[test]
    fn the_migrator_is_well_formed() {
        MIGRATOR.check().unwrap();
    }

    #[test]
    fn every_migration_has_a_down() {
        for m in migrations() {
            assert!(m.down.contains("DROP"), "{}", m.name);
        }
    }
}
