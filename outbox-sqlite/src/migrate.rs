//! The SQLite schema: numbered migrations the host applies explicitly.

use outbox_core::store_kit::schema::{Bookkeeping, Migrate, Migrator, ReadSchema};
use outbox_core::{async_trait, Migration, OutboxError, Result, TableName};
use sqlx::{SqliteConnection, SqlitePool};

use crate::connection::WriteTx;
use crate::error::map_err;

static MIGRATIONS: [Migration; 6] = [
    Migration::new(
        1,
        "create_outbox",
        include_str!("../migrations/0001_create_outbox.up.sql"),
        include_str!("../migrations/0001_create_outbox.down.sql"),
    ),
    Migration::new(
        2,
        "rowid_table",
        include_str!("../migrations/0002_rowid_table.up.sql"),
        include_str!("../migrations/0002_rowid_table.down.sql"),
    ),
    Migration::new(
        3,
        "key_heads",
        include_str!("../migrations/0003_key_heads.up.sql"),
        include_str!("../migrations/0003_key_heads.down.sql"),
    ),
    Migration::new(
        4,
        "slice_hash",
        include_str!("../migrations/0004_slice_hash.up.sql"),
        include_str!("../migrations/0004_slice_hash.down.sql"),
    ),
    Migration::new(
        5,
        "operator_reads",
        include_str!("../migrations/0005_operator_reads.up.sql"),
        include_str!("../migrations/0005_operator_reads.down.sql"),
    )
    .compatible_from(4),
    Migration::new(
        6,
        "parked_range",
        include_str!("../migrations/0006_parked_range.up.sql"),
        include_str!("../migrations/0006_parked_range.down.sql"),
    )
    .compatible_from(4),
];

/// The SQLite schema and its bookkeeping, for the core's migrator.
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
    TableName::render,
    "?1, ?2, ?3, ?4, ?5",
    |m| format!("{}, 0", m.record_literals("")),
);

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
impl ReadSchema for OnPool<'_> {
    async fn pair(&mut self, sql: &str) -> Result<(Option<i64>, Option<i64>)> {
        match self.tx.as_mut() {
            Some(tx) => pair_of(sql, &mut **tx).await,
            None => pair_of(sql, self.pool).await,
        }
    }
}

/// The first row's two integer columns, as [`ReadSchema::pair`] returns them.
async fn pair_of<'e, E>(sql: &str, on: E) -> Result<(Option<i64>, Option<i64>)>
where
    E: sqlx::Executor<'e, Database = sqlx::Sqlite>,
{
    // Read to the end: a statement left mid-result would keep its connection's read
    // snapshot open in the pool (SQLite's WAL), and later statements on it would see an
    // older schema.
    let rows: Vec<(Option<i64>, Option<i64>)> =
        sqlx::query_as(sql).fetch_all(on).await.map_err(map_err)?;
    Ok(rows.into_iter().next().unwrap_or((None, None)))
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

    async fn applied(&mut self, sql: &str) -> Result<Vec<(i64, Option<String>)>> {
        sqlx::query_as(sql)
            .fetch_all(self.tx()?)
            .await
            .map_err(map_err)
    }

    async fn record(&mut self, sql: &str, m: &Migration, checksum: &str) -> Result<()> {
        sqlx::query(sql)
            .bind(m.version)
            .bind(m.name)
            .bind(m.oldest_compatible)
            .bind(checksum)
            .bind(chrono::Utc::now().timestamp_micros())
            .execute(self.tx()?)
            .await
            .map(drop)
            .map_err(map_err)
    }

    async fn forget(&mut self, sql: &str, version: i64) -> Result<()> {
        sqlx::query(sql)
            .bind(version)
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

/// The migrations of the SQLite schema and their bookkeeping, for tools that run them
/// through the core's [`Migrator`] (a host extending the schema, a test playing a later
/// release) on a [`migration_connection`].
pub fn migrator() -> &'static Migrator {
    &MIGRATOR
}

/// A connection of `pool` the core's [`Migrator`] applies and reverts migrations on, in
/// one immediate transaction per run.
pub fn migration_connection(pool: &SqlitePool) -> impl Migrate + '_ {
    OnPool { pool, tx: None }
}

/// Applies every migration the database does not have yet, in one immediate transaction;
/// returns the resulting version. Safe to run concurrently and repeatedly.
pub async fn migrate(pool: &SqlitePool, table: &TableName) -> Result<i64> {
    MIGRATOR
        .migrate(&mut migration_connection(pool), table)
        .await
}

/// Reverts every migration, newest first, and drops the bookkeeping table: the outbox and
/// everything in it are deleted.
pub async fn migrate_down(pool: &SqlitePool, table: &TableName) -> Result<()> {
    migrate_down_to(pool, table, 0).await.map(drop)
}

/// Reverts the migrations newer than `version`, newest first, in one immediate
/// transaction, keeping the rows (`0`: every migration, and the outbox with them).
/// Refuses, changing nothing, a migration on the way that cannot be reverted.
pub async fn migrate_down_to(pool: &SqlitePool, table: &TableName, version: i64) -> Result<i64> {
    MIGRATOR
        .migrate_down_to(&mut migration_connection(pool), table, version)
        .await
}

/// Fails with a clear error unless a store of this build runs on the schema: at its
/// version, or newer inside its compatibility window (see
/// [`Migration::compatible_from`]).
pub async fn check_schema(pool: &SqlitePool, table: &TableName) -> Result<()> {
    MIGRATOR
        .check_schema(&mut migration_connection(pool), table, &table.qualified())
        .await
}
