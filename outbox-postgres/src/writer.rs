//! [`PgWriter`]: writing outbox entries inside the host's own transaction, on whichever
//! driver the host uses, without a pool or a store.

use std::sync::Arc;

#[cfg(feature = "sqlx")]
use outbox_core::{EntryId, OutboxError};
use outbox_core::{NewEntry, OutboxEntry, Result, StoreLimits, TableName};
#[cfg(feature = "sqlx")]
use std::collections::HashMap;
use tokio_postgres::GenericClient;

use crate::batch_params::NewEntries;
use crate::error::map_insert_err;
use crate::store::in_input_order;
use crate::wake_channel;

/// The savepoint an enqueue runs under when asked to (see [`PgWriter::savepoint`]).
const SAVEPOINT: &str = "outbox_enqueue";

/// Writes new entries on a connection the host holds, inside its transaction, so they
/// commit or roll back with its business writes: one statement and one round trip for the
/// whole batch, with one wake-up notification that listening drains hear only if the
/// transaction commits.
///
/// It needs no pool and makes no call of its own when built: a service that only writes
/// entries (its drain runs elsewhere) builds one from the table's name. A store hands out
/// its own with [`crate::PgClaimStore::writer`]. Cheap to clone.
///
/// Input is validated before anything is sent. An id that already exists fails with
/// [`outbox_core::OutboxError::DuplicateId`] and writes nothing; as after any failed statement,
/// PostgreSQL then aborts the host's transaction, unless the writer was built with
/// [`PgWriter::savepoint`], which keeps the transaction usable at the cost of two more
/// round trips.
#[derive(Debug, Clone)]
pub struct PgWriter {
    sql: Arc<str>,
    channel: Arc<String>,
    limits: StoreLimits,
    savepoint: bool,
    statements: crate::StatementMode,
}

impl PgWriter {
    /// A writer for `table` with the default limits.
    pub fn new(table: &TableName) -> Self {
        Self {
            sql: table.render(include_str!("../sql/enqueue.sql")).into(),
            channel: Arc::new(wake_channel(table)),
            limits: StoreLimits::default(),
            savepoint: false,
            statements: crate::StatementMode::Named,
        }
    }

    /// The rendered insert statement (`sql/enqueue.sql`), for the store's pool path.
    pub(crate) fn sql(&self) -> &str {
        &self.sql
    }

    /// Enforces `limits` on what it writes (use the store's, so both refuse the same).
    pub fn limits(mut self, limits: StoreLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Runs each enqueue under a savepoint, so that a duplicate id (or any other failure
    /// of the insert) is rolled back alone and the host's transaction stays usable. Only
    /// inside a transaction; two more round trips per call.
    pub fn savepoint(mut self, on: bool) -> Self {
        self.savepoint = on;
        self
    }

    /// How `PgWriter::enqueue_in_sqlx` (feature `sqlx`) sends its insert: prepared under a
    /// name and cached per connection ([`crate::StatementMode::Named`], sqlx's default) or
    /// unnamed, for connections through a transaction-mode pooler. sqlx sends even an unnamed
    /// statement's parse and its execution as two exchanges, which such a pooler may
    /// hand to two server connections: behind one, call `enqueue_in_sqlx` inside a
    /// transaction (as the outbox pattern does anyway), where the pooler keeps one
    /// server connection. [`PgWriter::enqueue_in`] always sends its insert unnamed, with
    /// its parameter types, in one round trip.
    pub fn statement_mode(mut self, mode: crate::StatementMode) -> Self {
        self.statements = mode;
        self
    }

    /// Writes `entries` on a tokio-postgres `Client` or `Transaction` (any
    /// [`GenericClient`]), in input order.
    pub async fn enqueue_in<C>(
        &self,
        client: &C,
        entries: Vec<NewEntry>,
    ) -> Result<Vec<OutboxEntry>>
    where
        C: GenericClient + Sync,
    {
        self.limits.check_new_entries(&entries)?;
        let columns = NewEntries::new(entries)?;
        if self.savepoint {
            client
                .batch_execute(&format!("SAVEPOINT {SAVEPOINT}"))
                .await
                .map_err(crate::error::map_err)?;
        }
        let result = client
            .query_typed(&self.sql, &columns.typed_params(&self.channel))
            .await;
        if self.savepoint {
            let end = match result {
                Ok(_) => format!("RELEASE SAVEPOINT {SAVEPOINT}"),
                Err(_) => {
                    format!("ROLLBACK TO SAVEPOINT {SAVEPOINT}; RELEASE SAVEPOINT {SAVEPOINT}")
                }
            };
            client
                .batch_execute(&end)
                .await
                .map_err(crate::error::map_err)?;
        }
        let rows = result.map_err(|e| map_insert_err(e, &columns.ids))?;
        in_input_order(&columns.ids, &rows)
    }

    /// Writes one entry; see [`PgWriter::enqueue_in`].
    pub async fn enqueue_one_in<C>(&self, client: &C, entry: NewEntry) -> Result<OutboxEntry>
    where
        C: GenericClient + Sync,
    {
        let mut written = self.enqueue_in(client, vec![entry]).await?;
        Ok(written.remove(0))
    }

    /// Writes `entries` on a sqlx PostgreSQL connection: a `&mut PgConnection`, or a
    /// transaction (`&mut *tx`), with the same single statement and notification as
    /// [`PgWriter::enqueue_in`]. Needs the `sqlx` feature.
    ///
    /// ```no_run
    /// # async fn place_order(pool: sqlx::PgPool) -> Result<(), Box<dyn std::error::Error>> {
    /// use outbox_core::{NewEntry, TableName};
    /// use outbox_postgres::PgWriter;
    ///
    /// let writer = PgWriter::new(&TableName::in_schema("app", "outbox")?);
    /// let mut tx = pool.begin().await?;
    /// sqlx::query("INSERT INTO app.orders (id) VALUES ($1)").bind(42_i64).execute(&mut *tx).await?;
    /// writer
    ///     .enqueue_in_sqlx(&mut tx, vec![NewEntry::new("orders.created", b"{\"order\":42}".to_vec())])
    ///     .await?;
    /// tx.commit().await?; // the entry, the order and the drains' wake-up, or none of them
    /// # Ok(())
    /// # }
    /// ```
    #[cfg(feature = "sqlx")]
    pub async fn enqueue_in_sqlx(
        &self,
        conn: &mut sqlx::PgConnection,
        entries: Vec<NewEntry>,
    ) -> Result<Vec<OutboxEntry>> {
        use sqlx::{Connection, Row};

        self.limits.check_new_entries(&entries)?;
        let kept = entries.clone();
        let columns = NewEntries::new(entries)?;
        let ids = columns.ids.clone();
        let rows = if self.savepoint {
            let mut savepoint = conn.begin().await.map_err(sqlx_err)?;
            let rows = columns
                .bind_sqlx(self.sqlx_insert(), &self.channel)
                .fetch_all(&mut *savepoint)
                .await
                .map_err(|e| sqlx_insert_err(e, &ids))?;
            savepoint.commit().await.map_err(sqlx_err)?;
            rows
        } else {
            columns
                .bind_sqlx(self.sqlx_insert(), &self.channel)
                .fetch_all(&mut *conn)
                .await
                .map_err(|e| sqlx_insert_err(e, &ids))?
        };
        // Only what the server chose comes back from the rows: the creation time (when the
        // entry named none) and the stamp; the rest is what was sent.
        let mut chosen: HashMap<EntryId, (chrono::DateTime<chrono::Utc>, uuid::Uuid)> =
            HashMap::with_capacity(rows.len());
        for row in &rows {
            let id: uuid::Uuid = row.try_get("id").map_err(sqlx_err)?;
            let created: chrono::DateTime<chrono::Utc> =
                row.try_get("created_at").map_err(sqlx_err)?;
            let stamp: uuid::Uuid = row.try_get("stamp").map_err(sqlx_err)?;
            chosen.insert(EntryId::from_uuid(id), (created, stamp));
        }
        kept.into_iter()
            .map(|new| {
                let (created, stamp) =
                    chosen
                        .remove(&new.id)
                        .ok_or_else(|| OutboxError::Database {
                            message: format!("the insert did not return entry {}", new.id),
                            source: None,
                        })?;
                let mut entry = OutboxEntry::from_new(new, created);
                entry.stamp = stamp;
                Ok(entry)
            })
            .collect()
    }
}

#[cfg(feature = "sqlx")]
impl PgWriter {
    /// The insert for sqlx, persistent (named, cached) only in the named mode.
    fn sqlx_insert(&self) -> sqlx::query::Query<'_, sqlx::Postgres, sqlx::postgres::PgArguments> {
        sqlx::query(&self.sql).persistent(self.statements == crate::StatementMode::Named)
    }
}

#[cfg(feature = "sqlx")]
fn sqlx_err(e: sqlx::Error) -> OutboxError {
    let state = e
        .as_database_error()
        .and_then(|db| db.code())
        .map(|c| c.into_owned());
    let message = e.to_string();
    match (state, &e) {
        (Some(state), _) => crate::error::from_state(&state, message, Box::new(e)),
        (
            None,
            sqlx::Error::Io(_)
            | sqlx::Error::Tls(_)
            | sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::WorkerCrashed,
        ) => OutboxError::Connection {
            message,
            source: Some(Box::new(e)),
        },
        (None, _) => OutboxError::Database {
            message,
            source: Some(Box::new(e)),
        },
    }
}

/// A unique violation names the entry whose id exists (PostgreSQL's detail quotes it).
#[cfg(feature = "sqlx")]
fn sqlx_insert_err(e: sqlx::Error, ids: &[EntryId]) -> OutboxError {
    let duplicate = e.as_database_error().and_then(|db| {
        if !db.is_unique_violation() {
            return None;
        }
        let detail = db
            .try_downcast_ref::<sqlx::postgres::PgDatabaseError>()
            .and_then(|pg| pg.detail())
            .unwrap_or_default();
        ids.iter()
            .find(|id| detail.contains(&id.to_string()))
            .copied()
    });
    match duplicate {
        Some(id) => OutboxError::DuplicateId(id),
        None => sqlx_err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_insert_is_rendered_for_its_table_and_channel() {
        let table = TableName::in_schema("app", "events").unwrap();
        let writer = PgWriter::new(&table);
        assert!(
            !writer.sql().contains('{'),
            "unrendered placeholder in {}",
            writer.sql()
        );
        assert!(
            writer.sql().contains("\"app\".\"events\""),
            "{}",
            writer.sql()
        );
        assert_eq!(*writer.channel, wake_channel(&table));
    }
}
