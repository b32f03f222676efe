//! The MariaDB / MySQL schema: numbered migrations the host applies explicitly.
//!
//! These engines commit every DDL statement on its own, so a run is not one transaction
//! as on PostgreSQL and SQLite: each migration is a single `CREATE`/`ALTER`/`DROP` (atomic
//! by itself) recorded right after it succeeds, and a named lock (`GET_LOCK`) held by the
//! migrating connection makes two hosts migrating at once take turns.

use outbox_core::store_kit::schema::{Bookkeeping, Migrate, Migrator, ReadSchema};
use outbox_core::{async_trait, Migration, OutboxError, Result, TableName};
use sqlx::pool::PoolConnection;
use sqlx::{MySql, MySqlConnection, MySqlPool};

use crate::error::map_err;
use crate::statements::render;

static MIGRATIONS: [Migration; 1] = [Migration::new(
    1,
    "create_outbox",
    include_str!("../migrations/0001_create_outbox.up.sql"),
    include_str!("../migrations/0001_create_outbox.down.sql"),
)];

/// The schema and its bookkeeping, for the core's migrator.
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
    "?, ?, ?, ?",
    |m| m.record_literals(""),
);

/// How long a migrating host waits for another one's run to end, in seconds.
const LOCK_WAIT_SECONDS: i64 = 600;

/// The migrations of the schema, oldest first.
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

/// One connection of the pool, holding the table's migration lock while a run lasts.
struct OnConnection<'a> {
    pool: &'a MySqlPool,
    conn: Option<PoolConnection<MySql>>,
    lock: String,
}

impl OnConnection<'_> {
    fn new(pool: &MySqlPool) -> OnConnection<'_> {
        OnConnection {
            pool,
            conn: None,
            lock: String::new(),
        }
    }

    fn conn(&mut self) -> Result<&mut PoolConnection<MySql>> {
        self.conn.as_mut().ok_or_else(|| OutboxError::Database {
            message: "the migration lock has not been taken".into(),
            source: None,
        })
    }
}

#[async_trait]
impl ReadSchema for OnConnection<'_> {
    async fn pair(&mut self, sql: &str) -> Result<(Option<i64>, Option<i64>)> {
        match self.conn.as_mut() {
            Some(conn) => pair_of(sql, &mut **conn).await,
            None => pair_of(sql, self.pool).await,
        }
    }
}

/// The first row's two integer columns, as [`ReadSchema::pair`] returns them.
async fn pair_of<'e, E>(sql: &str, on: E) -> Result<(Option<i64>, Option<i64>)>
where
    E: sqlx::Executor<'e, Database = MySql>,
{
    // Read to the end, as the SQLite store does: no statement is left mid-result on a
    // pooled connection.
    let rows: Vec<(Option<i64>, Option<i64>)> =
        sqlx::query_as(sql).fetch_all(on).await.map_err(map_err)?;
    Ok(rows.into_iter().next().unwrap_or((None, None)))
}

#[async_trait]
impl Migrate for OnConnection<'_> {
    async fn begin_locked(&mut self, table: &TableName) -> Result<()> {
        let mut conn = self.pool.acquire().await.map_err(map_err)?;
        self.lock = format!("outbox migrate {}", table.qualified());
        let taken: Option<i64> = sqlx::query_scalar(include_str!("../sql/migrations/lock.sql"))
            .bind(&self.lock)
            .bind(LOCK_WAIT_SECONDS)
            .fetch_one(&mut *conn)
            .await
            .map_err(map_err)?;
        if taken != Some(1) {
            return Err(OutboxError::Conflict {
                message: format!(
                    "another host has been migrating {} for {LOCK_WAIT_SECONDS} s",
                    table.qualified()
                ),
                source: None,
            });
        }
        self.conn = Some(conn);
        Ok(())
    }

    async fn run_script(&mut self, sql: &str) -> Result<()> {
        run_script(self.conn()?, sql.to_owned()).await
    }

    async fn applied(&mut self, sql: &str) -> Result<Vec<(i64, Option<String>)>> {
        sqlx::query_as(sql)
            .fetch_all(&mut **self.conn()?)
            .await
            .map_err(map_err)
    }

    async fn record(&mut self, sql: &str, m: &Migration, checksum: &str) -> Result<()> {
        sqlx::query(sql)
            .bind(m.version)
            .bind(m.name)
            .bind(m.oldest_compatible)
            .bind(checksum)
            .execute(&mut **self.conn()?)
            .await
            .map(drop)
            .map_err(map_err)
    }

    async fn forget(&mut self, sql: &str, version: i64) -> Result<()> {
        sqlx::query(sql)
            .bind(version)
            .execute(&mut **self.conn()?)
            .await
            .map(drop)
            .map_err(map_err)
    }

    async fn end(&mut self, outcome: Result<()>) -> Result<()> {
        let Some(mut conn) = self.conn.take() else {
            return outcome;
        };
        let released = sqlx::query(include_str!("../sql/migrations/release_lock.sql"))
            .bind(&self.lock)
            .execute(&mut *conn)
            .await;
        if released.is_err() {
            // Closing the connection releases the lock too.
            conn.close_on_drop();
        }
        outcome
    }
}

/// Runs a script of one or more statements (the text protocol runs them all, in order).
fn run_script(
    conn: &mut MySqlConnection,
    sql: String,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<()>> + Send + '_>> {
    Box::pin(async move {
        sqlx::Executor::execute(&mut *conn, sqlx::raw_sql(&sql))
            .await
            .map(drop)
            .map_err(map_err)
    })
}

/// The migrations of the schema and their bookkeeping, for tools that run them through
/// the core's [`Migrator`] (a host extending the schema, a test playing a later release)
/// on a [`migration_connection`].
pub fn migrator() -> &'static Migrator {
    &MIGRATOR
}

/// A connection of `pool` the core's [`Migrator`] applies and reverts migrations on,
/// holding the table's migration lock while a run lasts.
pub fn migration_connection(pool: &MySqlPool) -> impl Migrate + '_ {
    OnConnection::new(pool)
}

/// Applies every migration the database does not have yet under the table's migration
/// lock; returns the resulting version. Safe to run concurrently and repeatedly.
pub async fn migrate(pool: &MySqlPool, table: &TableName) -> Result<i64> {
    MIGRATOR
        .migrate(&mut migration_connection(pool), table)
        .await
}

/// Reverts every migration, newest first, and drops the bookkeeping table: the outbox and
/// everything in it are deleted.
pub async fn migrate_down(pool: &MySqlPool, table: &TableName) -> Result<()> {
    migrate_down_to(pool, table, 0).await.map(drop)
}

/// Reverts the migrations newer than `version`, newest first, under the table's migration
/// lock, keeping the rows (`0`: every migration, and the outbox with them). Refuses,
/// changing nothing, a migration on the way that cannot be reverted.
pub async fn migrate_down_to(pool: &MySqlPool, table: &TableName, version: i64) -> Result<i64> {
    MIGRATOR
        .migrate_down_to(&mut migration_connection(pool), table, version)
        .await
}

/// Fails with a clear error unless a store of this build runs on the schema: at its
/// version, or newer inside its compatibility window (see
/// [`Migration::compatible_from`]).
pub async fn check_schema(pool: &MySqlPool, table: &TableName) -> Result<()> {
    MIGRATOR
        .check_schema(
            &mut migration_connection(pool),
            table,
            &table.qualified_in(outbox_core::Quotes::BACKTICKS),
        )
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_migrator_is_well_formed() {
        let script = migration_script(&TableName::in_schema("app", "events").unwrap());
        assert!(script.contains("CREATE TABLE `app`.`events`"), "{script}");
        assert!(script.contains("`app`.`events_migrations`"), "{script}");
        assert!(!script.contains('{'), "{script}");
        assert_eq!(required_version(), 1);
    }
}
