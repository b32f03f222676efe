//! The I/O of a [`PortableBackend`] on a sqlx pool, written once, generic over sqlx's
//! [`sqlx::Database`]: an engine crate describes its database in a [`SqlxEngine`] (how it
//! binds a parameter, reads a row, maps an error) and runs the portable store on
//! [`SqlxBackend`]. Behind the `sqlx` feature, which the engine crates on sqlx turn on.

use std::marker::PhantomData;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::pool::PoolConnection;
use sqlx::query::Query;
use sqlx::{
    ColumnIndex, Connection, Database, Decode, Executor, IntoArguments, Pool, Row,
    TransactionManager, Type,
};

use super::backend::{ClockedEntry, Dialect, PortableBackend, SqlParam};
use crate::{EntryId, OutboxEntry, OutboxError, Result};

/// A query of `E`'s database with its arguments bound.
pub type SqlxQuery<'q, E> = Query<
    'q,
    <E as SqlxEngine>::Database,
    <<E as SqlxEngine>::Database as Database>::Arguments<'q>,
>;

/// The row type of `E`'s database.
pub type SqlxRow<E> = <<E as SqlxEngine>::Database as Database>::Row;

/// What differs between the databases the portable store runs on through sqlx: the data
/// of its SQL ([`Dialect`]) and how values cross the driver. Implemented once per engine
/// crate, on a unit type.
pub trait SqlxEngine: Send + Sync + 'static {
    /// The sqlx database.
    type Database: Database;
    /// The name reported in [`crate::Capabilities`].
    const NAME: &'static str;
    /// Whether the engine serves writes from several connections at once.
    const CONCURRENT_WRITES: bool;
    /// How the engine spells the store's SQL.
    const DIALECT: Dialect;

    /// `sql` with `params` bound in order.
    fn bind(sql: &str, params: Vec<SqlParam>) -> Result<SqlxQuery<'_, Self>>;
    /// A driver error in the core's terms.
    fn map_err(e: sqlx::Error) -> OutboxError;
    /// The `clock_now` column of a row.
    fn decode_clock(row: &SqlxRow<Self>) -> Result<DateTime<Utc>>;
    /// The entry of a whole row.
    fn decode_entry(row: &SqlxRow<Self>) -> Result<OutboxEntry>;
    /// The `id` column of a row.
    fn decode_id(row: &SqlxRow<Self>) -> Result<EntryId>;
    /// How many rows a statement wrote (sqlx has no trait for it).
    fn rows_affected(done: &<Self::Database as Database>::QueryResult) -> u64;
}

/// The portable store's backend on a sqlx pool of `E`'s database.
pub struct SqlxBackend<E: SqlxEngine> {
    pool: Pool<E::Database>,
    engine: PhantomData<E>,
}

impl<E: SqlxEngine> SqlxBackend<E> {
    /// The backend on `pool`.
    pub fn new(pool: Pool<E::Database>) -> Self {
        Self {
            pool,
            engine: PhantomData,
        }
    }

    /// The pool the store runs on.
    pub fn pool(&self) -> &Pool<E::Database> {
        &self.pool
    }
}

impl<E: SqlxEngine> Clone for SqlxBackend<E> {
    fn clone(&self) -> Self {
        Self::new(self.pool.clone())
    }
}

impl<E: SqlxEngine> std::fmt::Debug for SqlxBackend<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlxBackend")
            .field("engine", &E::NAME)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl<E> PortableBackend for SqlxBackend<E>
where
    E: SqlxEngine,
    for<'c> &'c mut <E::Database as Database>::Connection: Executor<'c, Database = E::Database>,
    for<'q> <E::Database as Database>::Arguments<'q>: IntoArguments<'q, E::Database>,
    i64: for<'r> Decode<'r, E::Database> + Type<E::Database>,
    usize: ColumnIndex<SqlxRow<E>>,
{
    type Connection = <E::Database as Database>::Connection;
    type Lease = PoolConnection<E::Database>;
    const NAME: &'static str = E::NAME;
    const CONCURRENT_WRITES: bool = E::CONCURRENT_WRITES;
    const DIALECT: Dialect = E::DIALECT;

    async fn acquire(&self) -> Result<Self::Lease> {
        self.pool.acquire().await.map_err(E::map_err)
    }

    fn close_on_drop(lease: &mut Self::Lease) {
        lease.close_on_drop();
    }

    fn in_transaction(conn: &Self::Connection) -> bool {
        conn.is_in_transaction()
    }

    async fn begin(conn: &mut Self::Connection) -> Result<()> {
        <E::Database as Database>::TransactionManager::begin(conn, None)
            .await
            .map_err(E::map_err)
    }

    async fn commit(conn: &mut Self::Connection) -> Result<()> {
        <E::Database as Database>::TransactionManager::commit(conn)
            .await
            .map_err(E::map_err)
    }

    async fn rollback(conn: &mut Self::Connection) -> Result<()> {
        <E::Database as Database>::TransactionManager::rollback(conn)
            .await
            .map_err(E::map_err)
    }

    fn is_duplicate(err: &OutboxError) -> bool {
        let source = match err {
            OutboxError::Database { source, .. } | OutboxError::Conflict { source, .. } => source,
            _ => return false,
        };
        source
            .as_ref()
            .and_then(|s| s.downcast_ref::<sqlx::Error>())
            .and_then(|e| e.as_database_error())
            .is_some_and(|db| db.is_unique_violation())
    }

    async fn fetch_entries(
        conn: &mut Self::Connection,
        sql: &str,
        params: Vec<SqlParam>,
    ) -> Result<Vec<ClockedEntry>> {
        let rows = E::bind(sql, params)?
            .fetch_all(&mut *conn)
            .await
            .map_err(E::map_err)?;
        rows.iter()
            .map(|r| Ok((E::decode_clock(r)?, E::decode_entry(r)?)))
            .collect()
    }

    async fn fetch_ids(
        conn: &mut Self::Connection,
        sql: &str,
        params: Vec<SqlParam>,
    ) -> Result<Vec<(DateTime<Utc>, EntryId)>> {
        let rows = E::bind(sql, params)?
            .fetch_all(&mut *conn)
            .await
            .map_err(E::map_err)?;
        rows.iter()
            .map(|r| Ok((E::decode_clock(r)?, E::decode_id(r)?)))
            .collect()
    }

    async fn fetch_clock(
        conn: &mut Self::Connection,
        sql: &str,
        params: Vec<SqlParam>,
    ) -> Result<DateTime<Utc>> {
        let row = E::bind(sql, params)?
            .fetch_one(&mut *conn)
            .await
            .map_err(E::map_err)?;
        E::decode_clock(&row)
    }

    async fn fetch_counts(
        conn: &mut Self::Connection,
        sql: &str,
        params: Vec<SqlParam>,
    ) -> Result<Vec<i64>> {
        let row = E::bind(sql, params)?
            .fetch_one(&mut *conn)
            .await
            .map_err(E::map_err)?;
        (0..row.len())
            .map(|i| row.try_get::<i64, _>(i).map_err(E::map_err))
            .collect()
    }

    async fn execute(conn: &mut Self::Connection, sql: &str, params: Vec<SqlParam>) -> Result<u64> {
        let done = E::bind(sql, params)?
            .execute(&mut *conn)
            .await
            .map_err(E::map_err)?;
        Ok(E::rows_affected(&done))
    }
}
