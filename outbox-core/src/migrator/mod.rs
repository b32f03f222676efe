//! Applying an engine's numbered migrations: the loop is written once, here. An engine
//! crate describes its schema as a [`Migrator`] (its migrations and the SQL of its
//! bookkeeping table, as data) and supplies a [`Migrate`] connection that can take the
//! migration lock and run scripts.
//!
//! The bookkeeping table records, per applied migration, the oldest store version that
//! runs on the schema it left and the checksum of its SQL. A store opens on any schema
//! inside its window ([`Migrator::judge`]); `migrate` refuses a migration edited since it
//! was applied, and leaves a newer schema as it is when this build's stores still run on
//! it (a rollback).

use async_trait::async_trait;

use crate::migration::latest_version;
use crate::migration::{Definition, RecordedDefinition, RecordedSchema};
use crate::{Migration, OutboxError, Result, TableName};

/// A connection the schema's recorded facts are read on: one statement, one row of two
/// nullable integers.
#[async_trait]
pub trait ReadSchema: Send {
    /// The first row's two integer columns (`(None, None)` when there is no row), by the
    /// rendered `sql`.
    async fn pair(&mut self, sql: &str) -> Result<(Option<i64>, Option<i64>)>;
}

/// A connection a [`Migrator`] applies migrations on: the few steps that differ between
/// engines (how the run's transaction begins and takes its lock, how a script and a
/// bound statement run, how rows are read).
#[async_trait]
pub trait Migrate: ReadSchema {
    /// Begins the transaction one run applies every step in, and takes the lock that
    /// makes two hosts migrating `table` at once take turns.
    async fn begin_locked(&mut self, table: &TableName) -> Result<()>;

    /// Runs a script of one or more statements inside that transaction.
    async fn run_script(&mut self, sql: &str) -> Result<()>;

    /// Every recorded migration's version and checksum (`None` where a release before
    /// checksums recorded it), by the rendered `sql`.
    async fn applied(&mut self, sql: &str) -> Result<Vec<(i64, Option<String>)>>;

    /// Records `migration` as applied (or completes the record an earlier release left),
    /// by the rendered `sql` with its version, name, oldest compatible version and
    /// `checksum` bound in that order.
    async fn record(&mut self, sql: &str, migration: &Migration, checksum: &str) -> Result<()>;

    /// Deletes the record of the migration at `version`, by the rendered `sql`.
    async fn forget(&mut self, sql: &str, version: i64) -> Result<()>;

    /// Every recorded definition (name, revision, checksum), by the rendered `sql`. Only
    /// engines whose schema has [`Definitions`] are asked.
    async fn recorded_definitions(&mut self, _sql: &str) -> Result<Vec<RecordedDefinition>> {
        Err(OutboxError::Unsupported(
            "definitions on this engine".into(),
        ))
    }

    /// Records `definition` as applied with `checksum` (name, revision and checksum bound
    /// in that order), by the rendered `sql`.
    async fn record_definition(
        &mut self,
        _sql: &str,
        _definition: &Definition,
        _checksum: &str,
    ) -> Result<()> {
        Err(OutboxError::Unsupported(
            "definitions on this engine".into(),
        ))
    }

    /// Ends the transaction: commits when `outcome` is `Ok`, rolls back otherwise.
    /// Returns `outcome`'s error, or the commit's.
    async fn end(&mut self, outcome: Result<()>) -> Result<()>;
}

/// The SQL of one engine's bookkeeping table, as templates for a table.
#[derive(Debug, Clone, Copy)]
pub struct Bookkeeping {
    /// Creates the table when it does not exist, with every column.
    pub create: &'static str,
    /// How many of the columns `oldest_compatible` and `checksum` the table has (one row:
    /// the count, and a NULL): releases before compatibility windows made it without.
    pub columns: &'static str,
    /// Adds those two columns to a table made without them.
    pub add_columns: &'static str,
    /// The highest recorded version (one row: it, and a NULL); reads any release's table.
    pub version: &'static str,
    /// The highest recorded version and the oldest store version that runs on it (a row
    /// recorded without one counts as its own version).
    pub window: &'static str,
    /// Every recorded version with its checksum, oldest first.
    pub applied: &'static str,
    /// Records one migration, or completes its record: version, name, oldest compatible
    /// version and checksum bound in that order.
    pub record: &'static str,
    /// Deletes one migration's record, its version bound.
    pub forget: &'static str,
    /// Drops the table.
    pub drop: &'static str,
}

/// An engine's stored functions ([`Definition`]s, applied in order after the migrations)
/// and the SQL of the table that records their checksums.
#[derive(Debug, Clone, Copy)]
pub struct Definitions {
    /// The definitions, in the order they are applied.
    pub list: &'static [Definition],
    /// Creates the table when it does not exist.
    pub create: &'static str,
    /// Every recorded name with its checksum.
    pub recorded: &'static str,
    /// Records one definition, or replaces its record: name, revision and checksum bound
    /// in that order.
    pub record: &'static str,
    /// The parameter list of `record`, as the template spells it (`$1, $2, $3`).
    pub record_parameters: &'static str,
    /// The literal values that replace `record_parameters` in a script.
    pub record_literals: fn(&Definition) -> String,
    /// A rendered definition as a printed script runs it (where a function must open its
    /// own batch, the engine wraps it).
    pub script_form: fn(&str) -> String,
    /// Drops the table.
    pub drop: &'static str,
}

impl Definitions {
    /// An engine whose schema has no stored functions kept as definitions.
    pub const NONE: Definitions = Definitions {
        list: &[],
        create: "",
        recorded: "",
        record: "",
        record_parameters: "",
        record_literals: |_| String::new(),
        script_form: str::to_owned,
        drop: "",
    };
}

/// One engine's schema: its migrations, oldest first, its definitions, and the SQL
/// templates of the tables that record what was applied. Built once per engine crate, as
/// a `static`.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Migrator {
    /// The migrations, oldest first.
    pub migrations: &'static [Migration],
    /// The bookkeeping table's statements.
    pub bookkeeping: Bookkeeping,
    /// The stored functions applied after the migrations ([`Definitions::NONE`] for none).
    pub definitions: Definitions,
    /// How the engine renders a template for a table.
    pub render: fn(&TableName, &str) -> String,
    /// The parameter list of the record statement, as the template spells it
    /// (`$1, $2, $3, $4`).
    pub record_parameters: &'static str,
    /// The literal values that replace `record_parameters` in a script.
    pub record_literals: fn(&Migration) -> String,
    /// What a script opens and closes with (its transaction).
    pub script_frame: (&'static str, &'static str),
}

impl Migrator {
    /// An engine's migrator: its migrations, oldest first, the statements of its
    /// bookkeeping table, how it renders a template for a table, and how the record
    /// statement takes its values (as parameters, and as literals in a script). It
    /// installs no stored functions and frames its script with nothing until told
    /// otherwise ([`Migrator::with_definitions`], [`Migrator::with_script_frame`]).
    pub const fn new(
        migrations: &'static [Migration],
        bookkeeping: Bookkeeping,
        render: fn(&TableName, &str) -> String,
        record_parameters: &'static str,
        record_literals: fn(&Migration) -> String,
    ) -> Self {
        Self {
            migrations,
            bookkeeping,
            definitions: Definitions::NONE,
            render,
            record_parameters,
            record_literals,
            script_frame: ("", ""),
        }
    }

    /// The same migrator, applying `definitions` (stored functions) after the migrations.
    pub const fn with_definitions(mut self, definitions: Definitions) -> Self {
        self.definitions = definitions;
        self
    }

    /// The same migrator, with its script opened by `open` and closed by `close` (its
    /// transaction).
    pub const fn with_script_frame(mut self, open: &'static str, close: &'static str) -> Self {
        self.script_frame = (open, close);
        self
    }

    /// The same migrator with other migrations (a later release's, in tests).
    pub const fn with_migrations(mut self, migrations: &'static [Migration]) -> Self {
        self.migrations = migrations;
        self
    }

    /// The schema version a store of this build requires: the newest migration's.
    pub fn required_version(&self) -> i64 {
        latest_version(self.migrations)
    }

    /// Applies every migration `table` does not have yet, in one transaction under the
    /// engine's migration lock; returns the version the schema is at. Safe to run
    /// concurrently and repeatedly.
    ///
    /// Before it applies anything it checks the recorded checksum of every migration
    /// already applied ([`OutboxError::MigrationChecksumMismatch`] names an edited one)
    /// and completes the records earlier releases left without one. A schema newer than
    /// this build is left as it is: `Ok` with its version while this build's stores run
    /// on it (a rollback), [`OutboxError::SchemaPastWindow`] when they do not.
    pub async fn migrate<M: Migrate + ?Sized>(
        &self,
        conn: &mut M,
        table: &TableName,
    ) -> Result<i64> {
        self.check()?;
        conn.begin_locked(table).await?;
        let outcome = self.apply_missing(conn, table).await;
        finish(conn, outcome).await
    }

    async fn apply_missing<M: Migrate + ?Sized>(
        &self,
        conn: &mut M,
        table: &TableName,
    ) -> Result<i64> {
        let render = |template: &str| (self.render)(table, template);
        self.ensure_bookkeeping(conn, table).await?;
        let recorded = self.read_window(conn, table).await?;
        let current = recorded.version.unwrap_or(0);
        if current > self.required_version() {
            self.judge(recorded, &table.qualified())?;
            tracing::info!(
                table = %table.qualified(),
                schema = current,
                store = self.required_version(),
                "the schema is newer than this release and runs its stores: nothing applied"
            );
            return Ok(current);
        }
        self.verify_checksums(conn, table, true).await?;
        let record = render(self.bookkeeping.record);
        for m in self.migrations.iter().filter(|m| m.version > current) {
            conn.run_script(&render(m.up)).await?;
            conn.record(&record, m, &m.checksum()).await?;
        }
        self.apply_definitions(conn, table, current < self.required_version())
            .await?;
        Ok(self.required_version())
    }

    /// Checks the recorded checksum of every applied migration this build knows
    /// ([`OutboxError::MigrationChecksumMismatch`] names an edited one); with `complete`,
    /// records the checksum (and window) where an earlier release recorded none.
    async fn verify_checksums<M: Migrate + ?Sized>(
        &self,
        conn: &mut M,
        table: &TableName,
        complete: bool,
    ) -> Result<()> {
        let render = |template: &str| (self.render)(table, template);
        let record = render(self.bookkeeping.record);
        for (version, recorded) in conn.applied(&render(self.bookkeeping.applied)).await? {
            let Some(m) = self.migrations.iter().find(|m| m.version == version) else {
                continue;
            };
            let expected = m.checksum();
            match recorded {
                Some(recorded) if recorded != expected => {
                    return Err(OutboxError::MigrationChecksumMismatch {
                        version,
                        file: m.file_name(),
                        recorded,
                        expected,
                    })
                }
                None if complete => conn.record(&record, m, &expected).await?,
                _ => {}
            }
        }
        Ok(())
    }

    /// Applies each definition not recorded yet or recorded at an older revision, and,
    /// when `migrated` (a migration applied in this run may have restated a function),
    /// every one recorded at this build's revision too. A newer revision is a newer
    /// release's and is left as it is; this build's revision recorded from other SQL is
    /// refused.
    async fn apply_definitions<M: Migrate + ?Sized>(
        &self,
        conn: &mut M,
        table: &TableName,
        migrated: bool,
    ) -> Result<()> {
        let defs = &self.definitions;
        if defs.list.is_empty() {
            return Ok(());
        }
        let render = |template: &str| (self.render)(table, template);
        conn.run_script(&render(defs.create)).await?;
        let recorded = conn.recorded_definitions(&render(defs.recorded)).await?;
        let record = render(defs.record);
        for d in defs.list {
            let sum = d.checksum();
            let apply = match recorded.iter().find(|r| r.name == d.name) {
                None => true,
                Some(r) if r.revision > d.revision => {
                    tracing::info!(
                        definition = d.name,
                        recorded = r.revision,
                        ours = d.revision,
                        "a newer release's definition is in place: left as it is"
                    );
                    false
                }
                Some(r) if r.revision < d.revision => true,
                Some(r) if r.checksum != sum => {
                    return Err(OutboxError::DefinitionChecksumMismatch {
                        name: d.name.to_owned(),
                        revision: d.revision,
                        recorded: r.checksum.clone(),
                        expected: sum,
                    })
                }
                Some(_) => migrated,
            };
            if apply {
                conn.run_script(&render(d.sql)).await?;
                conn.record_definition(&record, d, &sum).await?;
            }
        }
        Ok(())
    }

    /// Creates the bookkeeping table, or adds the columns a release before compatibility
    /// windows made it without.
    async fn ensure_bookkeeping<M: Migrate + ?Sized>(
        &self,
        conn: &mut M,
        table: &TableName,
    ) -> Result<()> {
        let render = |template: &str| (self.render)(table, template);
        conn.run_script(&render(self.bookkeeping.create)).await?;
        if conn.pair(&render(self.bookkeeping.columns)).await?.0 != Some(2) {
            conn.run_script(&render(self.bookkeeping.add_columns))
                .await?;
        }
        Ok(())
    }

    async fn read_window<R: ReadSchema + ?Sized>(
        &self,
        conn: &mut R,
        table: &TableName,
    ) -> Result<RecordedSchema> {
        let (version, oldest_compatible) = conn
            .pair(&(self.render)(table, self.bookkeeping.window))
            .await?;
        Ok(RecordedSchema {
            version,
            oldest_compatible,
        })
    }

    /// What the database records of `table`'s schema, whichever release recorded it.
    pub async fn read<R: ReadSchema + ?Sized>(
        &self,
        conn: &mut R,
        table: &TableName,
    ) -> Result<RecordedSchema> {
        let render = |template: &str| (self.render)(table, template);
        if conn.pair(&render(self.bookkeeping.columns)).await?.0 == Some(2) {
            self.read_window(conn, table).await
        } else {
            let (version, _) = conn.pair(&render(self.bookkeeping.version)).await?;
            Ok(RecordedSchema::exact(version))
        }
    }

    /// Reads what the database records of `table`'s schema and judges it
    /// ([`Migrator::judge`]): what a store runs when it is built, and again now and then.
    pub async fn check_schema<R: ReadSchema + ?Sized>(
        &self,
        conn: &mut R,
        table: &TableName,
        label: &str,
    ) -> Result<()> {
        let recorded = self.read(conn, table).await?;
        self.judge(recorded, label)
    }

    /// Reverts every migration, newest first, and drops the bookkeeping table, in one
    /// transaction under the migration lock. It deletes the outbox and everything in it.
    pub async fn migrate_down<M: Migrate + ?Sized>(
        &self,
        conn: &mut M,
        table: &TableName,
    ) -> Result<()> {
        self.migrate_down_to(conn, table, 0).await.map(drop)
    }

    /// Reverts the migrations newer than `target`, newest first, in one transaction under
    /// the migration lock (on engines whose DDL is transactional), and returns the version
    /// the schema is then at; the rows are kept for
    /// any `target` of 1 or more. `0` reverts them all and drops the bookkeeping table:
    /// the outbox and everything in it are deleted. Refuses, before it changes anything,
    /// a schema newer than this build (revert with the release that applied it) and a
    /// migration on the way whose down script says it cannot be reverted.
    pub async fn migrate_down_to<M: Migrate + ?Sized>(
        &self,
        conn: &mut M,
        table: &TableName,
        target: i64,
    ) -> Result<i64> {
        self.check()?;
        if !(0..=self.required_version()).contains(&target) {
            return Err(OutboxError::invalid(
                "target",
                format!(
                    "the version to revert to must be between 0 and {}",
                    self.required_version()
                ),
            ));
        }
        conn.begin_locked(table).await?;
        let outcome = self.revert(conn, table, target).await;
        finish(conn, outcome).await
    }

    async fn revert<M: Migrate + ?Sized>(
        &self,
        conn: &mut M,
        table: &TableName,
        target: i64,
    ) -> Result<i64> {
        let render = |template: &str| (self.render)(table, template);
        self.ensure_bookkeeping(conn, table).await?;
        let current = self.read_window(conn, table).await?.version.unwrap_or(0);
        if current > self.required_version() {
            return Err(OutboxError::invalid(
                "target",
                format!(
                    "the schema is at version {current}, newer than this release's {}: \
                     revert it with the release that applied it",
                    self.required_version()
                ),
            ));
        }
        self.verify_checksums(conn, table, false).await?;
        let steps: Vec<&Migration> = self
            .migrations
            .iter()
            .rev()
            .filter(|m| m.version > target && m.version <= current)
            .collect();
        if let Some((m, reason)) = steps
            .iter()
            .find_map(|m| m.irreversible().map(|reason| (m, reason)))
        {
            return Err(OutboxError::IrreversibleMigration {
                version: m.version,
                file: m.file_name(),
                reason: reason.to_owned(),
            });
        }
        let forget = render(self.bookkeeping.forget);
        for m in steps {
            conn.run_script(&render(m.down)).await?;
            conn.forget(&forget, m.version).await?;
        }
        if target == 0 {
            if !self.definitions.list.is_empty() {
                conn.run_script(&render(self.definitions.drop)).await?;
            }
            conn.run_script(&render(self.bookkeeping.drop)).await?;
        }
        Ok(target.min(current))
    }

    /// Every migration as one script for `table`, in one transaction, recording each as it
    /// goes: for hosts that apply schema changes with their own tools.
    pub fn script(&self, table: &TableName) -> String {
        let render = |template: &str| (self.render)(table, template);
        let (open, close) = self.script_frame;
        let mut script = format!("{open}{}", render(self.bookkeeping.create));
        for m in self.migrations {
            script.push_str(&format!("\n-- migration {}: {}\n", m.version, m.name));
            script.push_str(&render(m.up));
            let record = self
                .bookkeeping
                .record
                .replace(self.record_parameters, &(self.record_literals)(m));
            script.push_str(&format!(
                "\n{};\n",
                render(record.trim_end().trim_end_matches(';'))
            ));
        }
        let defs = &self.definitions;
        if !defs.list.is_empty() {
            script.push_str(&format!("\n{}", render(defs.create)));
            for d in defs.list {
                script.push_str(&format!("\n-- definition: {}\n", d.name));
                script.push_str(&(defs.script_form)(&render(d.sql)));
                let record = defs
                    .record
                    .replace(defs.record_parameters, &(defs.record_literals)(d));
                script.push_str(&format!(
                    "\n{};\n",
                    render(record.trim_end().trim_end_matches(';'))
                ));
            }
        }
        script.push_str(close);
        script
    }

    /// Whether a store of this build runs on the schema the database records: at this
    /// build's version, or newer while every migration since keeps this build's stores
    /// running (its compatibility window). `table` names the table in the error.
    ///
    /// Refuses with [`OutboxError::SchemaNotMigrated`] (never migrated),
    /// [`OutboxError::SchemaVersionMismatch`] (older: run `migrate`) or
    /// [`OutboxError::SchemaPastWindow`] (contracted past this build: finish the rollout).
    pub fn judge(&self, recorded: RecordedSchema, table: &str) -> Result<()> {
        let store = self.required_version();
        match recorded.version {
            None => Err(OutboxError::SchemaNotMigrated {
                detail: format!("no migration of {table} has been applied"),
            }),
            Some(found) if found < store => Err(OutboxError::SchemaVersionMismatch {
                expected: store,
                found,
            }),
            Some(found) => {
                let oldest_compatible = recorded.oldest_compatible.unwrap_or(found);
                if oldest_compatible <= store {
                    Ok(())
                } else {
                    Err(OutboxError::SchemaPastWindow {
                        store,
                        found,
                        oldest_compatible,
                    })
                }
            }
        }
    }

    /// The migrations are numbered 1, 2, 3, … in order, each one's oldest compatible
    /// version is its own or earlier and never earlier than the one before's, and the
    /// record template spells the parameters the literals replace: a mistake in an engine
    /// crate, caught before it touches a database.
    pub fn check(&self) -> Result<()> {
        let numbered = self.migrations.iter().zip(1..).all(|(m, n)| m.version == n);
        let windows = self
            .migrations
            .iter()
            .all(|m| m.oldest_compatible <= m.version)
            && self
                .migrations
                .windows(2)
                .all(|w| w[0].oldest_compatible <= w[1].oldest_compatible);
        let defs = &self.definitions;
        let definitions = defs.list.is_empty()
            || (defs.record.contains(defs.record_parameters) && !defs.create.is_empty());
        if numbered
            && windows
            && definitions
            && self.bookkeeping.record.contains(self.record_parameters)
        {
            Ok(())
        } else {
            Err(OutboxError::invalid(
                "migrations",
                "the engine's migrations are not numbered 1, 2, 3, … in order, a \
                 migration's oldest compatible version is newer than itself or older than \
                 the one before's, or a record template does not spell its parameters",
            ))
        }
    }
}

/// Ends a run's transaction with its outcome: commits and returns the version when it
/// succeeded, rolls back and returns its error otherwise.
async fn finish<M: Migrate + ?Sized>(conn: &mut M, outcome: Result<i64>) -> Result<i64> {
    match outcome {
        Ok(version) => conn.end(Ok(())).await.map(|()| version),
        Err(e) => conn.end(Err(e)).await.map(|()| 0),
    }
}

#[cfg(test)]
mod tests;
