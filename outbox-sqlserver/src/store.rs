//! [`SqlServerClaimStore`]: construction, and enqueue inside the host's own transaction.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use outbox_core::{OutboxError, Result, StoreLimits, TableName};
use tiberius::{ColumnData, Row};

use crate::params::refs;
use crate::pool::SqlServerPool;
use crate::statements::Statements;
use outbox_core::ConflictRetry;

use crate::{migrate, SqlServerStoreConfig, SqlServerWriter};

/// The SQL Server claim store: batch claims with `UPDLOCK, READPAST` and `OUTPUT` in one
/// round trip, batch completions and renewals in one round trip each, judged and written
/// atomically on locked rows.
///
/// Cheap to clone (one shared pool). Every call runs one batch on a pooled connection;
/// a call that fails or is dropped mid-flight never returns its connection to the pool.
#[derive(Debug, Clone)]
pub struct SqlServerClaimStore {
    pub(crate) inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) pool: SqlServerPool,
    pub(crate) sql: Statements,
    pub(crate) limits: StoreLimits,
    pub(crate) table: TableName,
    pub(crate) retry: ConflictRetry,
    /// Calls run again after the server rolled them back.
    pub(crate) retried: AtomicU64,
    pub(crate) writer: SqlServerWriter,
    /// Where each kind of claim starts its walk of the pending index.
    pub(crate) starts: outbox_core::store_kit::claims::ClaimStarts,
}

impl SqlServerClaimStore {
    /// Builds the store on `pool` (see [`crate::connect_pool`]) for the configured table.
    ///
    /// Fails with [`OutboxError::SchemaNotMigrated`] when the migrations were never
    /// applied and [`OutboxError::SchemaVersionMismatch`] when the schema is older than
    /// this build, [`OutboxError::SchemaPastWindow`] when it is newer and outside its
    /// compatibility window. Reads where the table's other stores' claims start, so that its own first
    /// claims start there too (see the crate docs).
    pub async fn new(pool: SqlServerPool, config: SqlServerStoreConfig) -> Result<Self> {
        let SqlServerStoreConfig {
            table,
            limits,
            retry,
            full_walk_every,
        } = config;
        let starts = outbox_core::store_kit::claims::ClaimStarts::new(
            outbox_core::store_kit::claims::check_full_walk_every(full_walk_every)?,
        );
        let retried = AtomicU64::new(0);
        migrate::check_schema_on(
            &mut crate::pool::SchemaReader {
                pool: &pool,
                retry: &retry,
                retried: &retried,
            },
            &table,
        )
        .await?;
        let sql = Statements::render(&table);
        let rows = crate::pool::query(&pool, &retry, &retried, &sql.shared_starts, &[]).await?;
        starts.told(crate::starts::shared_views(&rows)?);
        Ok(Self {
            inner: Arc::new(Inner {
                writer: SqlServerWriter::new(&table).limits(limits.clone()),
                sql,
                pool,
                limits,
                table,
                retry,
                retried,
                starts,
            }),
        })
    }

    /// The pool the store runs on.
    pub fn pool(&self) -> &SqlServerPool {
        &self.inner.pool
    }

    /// The outbox table.
    pub fn table(&self) -> &TableName {
        &self.inner.table
    }

    /// How many calls were run again because the server rolled them back (deadlock
    /// victim, lock timeout) since the store was built: a measure of lock contention.
    pub fn retried_calls(&self) -> u64 {
        self.inner.retried.load(Ordering::Relaxed)
    }

    /// The store's writer: the same table and limits, for writing entries on the host's
    /// own client inside its transaction (see [`SqlServerWriter`]).
    pub fn writer(&self) -> &SqlServerWriter {
        &self.inner.writer
    }

    /// Runs one batch of the store's and returns its rows.
    pub(crate) async fn query(
        &self,
        sql: &str,
        params: &[ColumnData<'static>],
    ) -> Result<Vec<Row>> {
        crate::pool::query(
            &self.inner.pool,
            &self.inner.retry,
            &self.inner.retried,
            sql,
            &refs(params),
        )
        .await
    }

    /// Runs a batch whose one row holds one count in `column`.
    pub(crate) async fn count(
        &self,
        sql: &str,
        params: &[ColumnData<'static>],
        column: &'static str,
    ) -> Result<u64> {
        let rows = self.query(sql, params).await?;
        let row = rows.first().ok_or_else(|| OutboxError::Database {
            message: format!("the statement returned no {column} row"),
            source: None,
        })?;
        let n = match row.try_get::<i64, _>(column) {
            Ok(n) => n,
            // @@ROWCOUNT is an int; COUNT_BIG a bigint.
            Err(_) => row
                .try_get::<i32, _>(column)
                .map_err(crate::error::map_err)?
                .map(i64::from),
        };
        n.and_then(|n| u64::try_from(n).ok())
            .ok_or_else(|| OutboxError::Database {
                message: format!("the statement returned no valid {column} count"),
                source: None,
            })
    }
}
