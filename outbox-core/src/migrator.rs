//! Applying an engine's numbered migrations: the loop is written once, here. An engine
//! crate describes its schema as a [`Migrator`] (its migrations and the SQL of its
//! bookkeeping table, as data) and supplies a [`Migrate`] connection that can take the
//! migration lock and run scripts.

use async_trait::async_trait;

use crate::store_kit::latest_version;
use crate::{Migration, OutboxError, Result, TableName};

/// A connection a [`Migrator`] applies migrations on: the few steps that differ between
/// engines (how the run's transaction begins and takes its lock, how a script and a
/// bound statement run, how the recorded version is read).
#[async_trait]
pub trait Migrate: Send {
    /// Begins the transaction one run applies every step in, and takes the lock that
    /// makes two hosts migrating `table` at once take turns.
    async fn begin_locked(&mut self, table: &TableName) -> Result<()>;

    /// Runs a script of one or more statements inside that transaction.
    async fn run_script(&mut self, sql: &str) -> Result<()>;

    /// The highest version recorded in the bookkeeping table (`None`: none recorded), by
    /// the rendered `sql`.
    async fn recorded_version(&mut self, sql: &str) -> Result<Option<i64>>;

    /// Records `migration` as applied, by the rendered `sql` with its version and name
    /// bound.
    async fn record(&mut self, sql: &str, migration: &Migration) -> Result<()>;

    /// Ends the transaction: commits when `outcome` is `Ok`, rolls back otherwise.
    /// Returns `outcome`'s error, or the commit's.
    async fn end(&mut self, outcome: Result<()>) -> Result<()>;
}

/// One engine's schema: its migrations, oldest first, and the SQL templates of the table
/// that records which were applied. Built once per engine crate, as a `static`.
#[derive(Debug, Clone, Copy)]
pub struct Migrator {
    /// The migrations, oldest first.
    pub migrations: &'static [Migration],
    /// Creates the bookkeeping table when it does not exist.
    pub create_bookkeeping: &'static str,
    /// Reads the highest recorded version (one row, one nullable integer).
    pub recorded_version: &'static str,
    /// Records one migration, with its version and name as bound parameters.
    pub record: &'static str,
    /// Drops the bookkeeping table.
    pub drop_bookkeeping: &'static str,
    /// How the engine renders a template for a table.
    pub render: fn(&TableName, &str) -> String,
    /// The parameter list of `record`, as the template spells it (`$1, $2`).
    pub record_parameters: &'static str,
    /// The literal values that replace `record_parameters` in a script.
    pub record_literals: fn(&Migration) -> String,
    /// What a script opens and closes with (its transaction).
    pub script_frame: (&'static str, &'static str),
}

impl Migrator {
    /// The schema version a store of this build requires: the newest migration's.
    pub fn required_version(&self) -> i64 {
        latest_version(self.migrations)
    }

    /// Applies every migration `table` does not have yet, in one transaction under the
    /// engine's migration lock; returns the version the schema is at. Safe to run
    /// concurrently and repeatedly. A schema newer than this build is refused with
    /// [`OutboxError::SchemaVersionMismatch`] and left as it is.
    pub async fn migrate<M: Migrate + ?Sized>(
        &self,
        conn: &mut M,
        table: &TableName,
    ) -> Result<i64> {
        self.check()?;
        conn.begin_locked(table).await?;
        let outcome = self.apply_missing(conn, table).await;
        conn.end(outcome).await?;
        Ok(self.required_version())
    }

    async fn apply_missing<M: Migrate + ?Sized>(
        &self,
        conn: &mut M,
        table: &TableName,
    ) -> Result<()> {
        let render = |template: &str| (self.render)(table, template);
        conn.run_script(&render(self.create_bookkeeping)).await?;
        let current = conn
            .recorded_version(&render(self.recorded_version))
            .await?
            .unwrap_or(0);
        if current > self.required_version() {
            return Err(OutboxError::SchemaVersionMismatch {
                expected: self.required_version(),
                found: current,
            });
        }
        let record = render(self.record);
        for m in self.migrations.iter().filter(|m| m.version > current) {
            conn.run_script(&render(m.up)).await?;
            conn.record(&record, m).await?;
        }
        Ok(())
    }

    /// Reverts every migration, newest first, and drops the bookkeeping table, in one
    /// transaction under the migration lock. It deletes the outbox and everything in it.
    pub async fn migrate_down<M: Migrate + ?Sized>(
        &self,
        conn: &mut M,
        table: &TableName,
    ) -> Result<()> {
        self.check()?;
        conn.begin_locked(table).await?;
        let outcome = async {
            for m in self.migrations.iter().rev() {
                conn.run_script(&(self.render)(table, m.down)).await?;
            }
            conn.run_script(&(self.render)(table, self.drop_bookkeeping))
                .await
        }
        .await;
        conn.end(outcome).await
    }

    /// Every migration as one script for `table`, in one transaction, recording each as it
    /// goes: for hosts that apply schema changes with their own tools.
    pub fn script(&self, table: &TableName) -> String {
        let render = |template: &str| (self.render)(table, template);
        let (open, close) = self.script_frame;
        let mut script = format!("{open}{}", render(self.create_bookkeeping));
        for m in self.migrations {
            script.push_str(&format!("\n-- migration {}: {}\n", m.version, m.name));
            script.push_str(&render(m.up));
            let record = self
                .record
                .replace(self.record_parameters, &(self.record_literals)(m));
            script.push_str(&format!(
                "\n{};\n",
                render(record.trim_end().trim_end_matches(';'))
            ));
        }
        script.push_str(close);
        script
    }

    /// Whether `found` (the recorded version; `None`: never migrated) is the one this
    /// build requires; `table` names the table in the error.
    pub fn judge(&self, found: Option<i64>, table: &str) -> Result<()> {
        crate::store_kit::judge_schema_version(found, self.required_version(), table)
    }

    /// The migrations are numbered 1, 2, 3, … in order, and the record template spells
    /// the parameters the literals replace: a mistake in an engine crate, caught before it
    /// touches a database.
    pub fn check(&self) -> Result<()> {
        let numbered = self.migrations.iter().zip(1..).all(|(m, n)| m.version == n);
        if numbered && self.record.contains(self.record_parameters) {
            Ok(())
        } else {
            Err(OutboxError::invalid(
                "migrations",
                "the engine's migrations are not numbered 1, 2, 3, … in order, or its record \
                 template does not spell its parameters",
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static STEPS: [Migration; 2] = [
        Migration {
            version: 1,
            name: "first",
            up: "CREATE TABLE {table} (x int);",
            down: "DROP TABLE {table};",
        },
        Migration {
            version: 2,
            name: "second",
            up: "ALTER TABLE {table} ADD y int;",
            down: "ALTER TABLE {table} DROP y;",
        },
    ];

    fn migrator(migrations: &'static [Migration]) -> Migrator {
        Migrator {
            migrations,
            create_bookkeeping: "CREATE TABLE IF NOT EXISTS {name}_migrations (version int);",
            recorded_version: "SELECT max(version) FROM {name}_migrations",
            record: "INSERT INTO {name}_migrations VALUES ($1, $2);\n",
            drop_bookkeeping: "DROP TABLE {name}_migrations",
            render: TableName::render,
            record_parameters: "$1, $2",
            record_literals: |m| format!("{}, '{}'", m.version, m.name),
            script_frame: ("BEGIN;\n", "COMMIT;\n"),
        }
    }

    #[test]
    fn the_script_applies_and_records_every_migration_in_its_frame() {
        let script = migrator(&STEPS).script(&TableName::new("events").unwrap());
        assert!(script.starts_with("BEGIN;\nCREATE TABLE IF NOT EXISTS events_migrations"));
        assert!(script.ends_with("COMMIT;\n"));
        let first = script.find("CREATE TABLE \"events\" (x int);").unwrap();
        let recorded = script
            .find("INSERT INTO events_migrations VALUES (1, 'first');\n")
            .unwrap();
        let second = script.find("ALTER TABLE \"events\" ADD y int;").unwrap();
        assert!(first < recorded && recorded < second, "{script}");
        assert!(script.contains("VALUES (2, 'second');"), "{script}");
        assert!(!script.contains('$') && !script.contains('{'), "{script}");
    }

    #[test]
    fn the_required_version_is_the_newest() {
        assert_eq!(migrator(&STEPS).required_version(), 2);
        migrator(&STEPS).judge(Some(2), "t").unwrap();
        assert!(migrator(&STEPS).judge(Some(1), "t").is_err());
    }

    #[test]
    fn a_migration_list_with_a_gap_or_an_unspelt_parameter_is_refused() {
        static GAP: [Migration; 1] = [Migration {
            version: 2,
            name: "x",
            up: "",
            down: "",
        }];
        assert!(migrator(&GAP).check().is_err());
        let mut wrong = migrator(&STEPS);
        wrong.record_parameters = "?1, ?2";
        assert!(wrong.check().is_err());
        migrator(&STEPS).check().unwrap();
    }
}
