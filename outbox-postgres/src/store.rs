//! [`PgClaimStore`]: construction, and enqueue inside the host's own transaction.

use std::collections::HashMap;
use std::sync::Arc;

use deadpool_postgres::Pool;
use outbox_core::{EntryId, OutboxEntry, OutboxError, Result, StoreLimits, TableName};
use tokio_postgres::Row;

use crate::statements::Statements;
use crate::typed::typed;
use crate::{connection, migrate, row, wake_channel, PgListener, PgStoreConfig, PgWriter};

/// The PostgreSQL claim store: batch claims with `FOR UPDATE SKIP LOCKED` in one round
/// trip, batch completions and renewals in one statement each, judged and written
/// atomically on locked rows.
///
/// Cheap to clone (one shared pool). Every call runs one autocommit statement on a
/// pooled connection; a call dropped mid-statement never returns its connection to the
/// pool (see the crate docs on cancellation).
#[derive(Debug, Clone)]
pub struct PgClaimStore {
    pub(crate) inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) db: connection::Db,
    pub(crate) sql: Statements,
    pub(crate) admin_sql: crate::admin::AdminStatements,
    pub(crate) limits: StoreLimits,
    pub(crate) table: TableName,
    pub(crate) channel: String,
    pub(crate) listener: Option<Arc<PgListener>>,
    pub(crate) writer: PgWriter,
    /// The table has the indexes claims in per-key order walk.
    pub(crate) ordered: bool,
    /// Where each kind of claim starts its walk of the pending index.
    pub(crate) starts: outbox_core::store_kit::claims::ClaimStarts,
}

impl PgClaimStore {
    /// Builds the store on `pool` (sized by the host) for the configured table.
    ///
    /// Fails with [`OutboxError::SchemaNotMigrated`] when the migrations were never
    /// applied, [`OutboxError::SchemaVersionMismatch`] when the schema is older than
    /// this build, [`OutboxError::SchemaPastWindow`] when it is newer and outside its
    /// compatibility window, and [`OutboxError::InvalidInput`] when the configured listener listens on
    /// another table's channel. It claims in per-key order if the table was prepared for
    /// it ([`crate::enable_ordered_claims`]), and its first claims start where the table's
    /// other stores shared that theirs do (see the crate docs).
    pub async fn new(pool: Pool, config: PgStoreConfig) -> Result<Self> {
        let PgStoreConfig {
            table,
            limits,
            listener,
            tls,
            call_timeout,
            full_walk_every,
            statements,
        } = config;
        let channel = wake_channel(&table);
        if let Some(l) = &listener {
            if l.channel() != channel {
                return Err(OutboxError::invalid(
                    "listener",
                    format!(
                        "it listens on {:?} but the table {} signals {channel:?}",
                        l.channel(),
                        table.qualified()
                    ),
                ));
            }
        }
        let db = connection::Db {
            pool,
            tls,
            deadline: call_timeout.0,
            statements,
        };
        // What the build reads runs once: unnamed whatever the mode, so that a named store
        // behind a transaction pooler fails at its calls, with the error that says why,
        // rather than by chance at its build.
        let once = db.unnamed();
        migrate::check_schema_on(&mut connection::SchemaReader(&once), &table).await?;
        let [pending, retry, qualified, trigger] = crate::ordering::prepared_params(&table);
        let rows = connection::query(
            &once,
            crate::ordering::PREPARED,
            &[
                typed(&pending),
                typed(&retry),
                typed(&qualified),
                typed(&trigger),
            ],
        )
        .await?;
        let prepared: bool = rows
            .first()
            .map(|r| r.try_get(0))
            .transpose()
            .map_err(crate::error::map_err)?
            .unwrap_or(false);
        let sql = Statements::render(&table);
        let starts = outbox_core::store_kit::claims::ClaimStarts::new(full_walk_every.0);
        starts.told(crate::starts::shared_views(&once, &sql.shared_starts).await?);
        Ok(Self {
            inner: Arc::new(Inner {
                writer: PgWriter::new(&table)
                    .limits(limits.clone())
                    .statement_mode(statements),
                sql,
                admin_sql: crate::admin::AdminStatements::render(&table),
                db,
                limits,
                table,
                channel,
                listener,
                ordered: prepared,
                starts,
            }),
        })
    }

    /// How the store sends its statements (see [`crate::StatementMode`]).
    pub fn statement_mode(&self) -> crate::StatementMode {
        self.inner.db.statements
    }

    /// The pool the store runs on.
    pub fn pool(&self) -> &Pool {
        &self.inner.db.pool
    }

    /// The outbox table.
    pub fn table(&self) -> &TableName {
        &self.inner.table
    }

    /// The channel every enqueue notifies (see [`wake_channel`]).
    pub fn wake_channel(&self) -> &str {
        &self.inner.channel
    }

    /// The writer this store's enqueues inside a host's transaction go through: hand it
    /// to code that only writes entries (it holds no pool).
    pub fn writer(&self) -> &PgWriter {
        &self.inner.writer
    }
}

/// The inserted rows, in the order the entries were given.
pub(crate) fn in_input_order(ids: &[EntryId], rows: &[Row]) -> Result<Vec<OutboxEntry>> {
    let mut by_id = rows
        .iter()
        .map(|r| row::entry(r).map(|e| (e.id, e)))
        .collect::<Result<HashMap<_, _>>>()?;
    ids.iter()
        .map(|id| {
            by_id.remove(id).ok_or_else(|| OutboxError::Database {
                message: format!("the insert did not return entry {id}"),
                source: None,
            })
        })
        .collect()
}
