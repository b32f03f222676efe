//! [`SqlServerWriter`]: writing outbox entries on the host's own client, inside its
//! transaction, without a pool or a store.

use futures_util::io::{AsyncRead, AsyncWrite};
use outbox_core::{NewEntry, OutboxEntry, Result, StoreLimits, TableName};
use tiberius::Client;

use crate::enqueue::{self, Bound};
use crate::statements::Statements;

/// Writes new entries on a tiberius client the host holds, inside the transaction it holds
/// there, so they commit or roll back with its business writes: one round trip per 230
/// entries.
///
/// It needs no pool and makes no call when built: a service whose drain runs elsewhere
/// builds one from the table's name; a store hands out its own with
/// [`crate::SqlServerClaimStore::writer`].
///
/// The input is validated first. An id that already exists fails with
/// [`outbox_core::OutboxError::DuplicateId`]; after any error the host should roll its
/// transaction back (earlier chunks of a large batch may have been written in it).
/// The client needs the SET options every mainstream driver uses (tiberius's own
/// defaults: `ANSI_NULLS`, `QUOTED_IDENTIFIER`, `ANSI_WARNINGS` on), which the table's
/// filtered indexes require.
#[derive(Debug, Clone)]
pub struct SqlServerWriter {
    sql: std::sync::Arc<Statements>,
    limits: StoreLimits,
}

impl SqlServerWriter {
    /// A writer for `table` with the default limits.
    pub fn new(table: &TableName) -> Self {
        Self {
            sql: std::sync::Arc::new(Statements::render(table)),
            limits: StoreLimits::default(),
        }
    }

    /// Enforces `limits` on what it writes (use the store's, so both refuse the same).
    pub fn limits(mut self, limits: StoreLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Writes `entries` on `client`, in input order, and returns them as written.
    ///
    /// ```no_run
    /// # async fn demo<S>(client: &mut tiberius::Client<S>) -> Result<(), Box<dyn std::error::Error>>
    /// # where S: futures_util::io::AsyncRead + futures_util::io::AsyncWrite + Unpin + Send {
    /// use outbox_core::{NewEntry, TableName};
    /// let writer = outbox_sqlserver::SqlServerWriter::new(&TableName::new("outbox")?);
    /// client.simple_query("BEGIN TRANSACTION").await?;
    /// // client.execute("INSERT INTO orders …", &[]).await?;
    /// writer.enqueue_in(client, vec![NewEntry::new("orders.created", b"{}".to_vec())]).await?;
    /// client.simple_query("COMMIT").await?;
    /// # Ok(()) }
    /// ```
    pub async fn enqueue_in<S>(
        &self,
        client: &mut Client<S>,
        entries: Vec<NewEntry>,
    ) -> Result<Vec<OutboxEntry>>
    where
        S: AsyncRead + AsyncWrite + Unpin + Send,
    {
        self.limits.check_new_entries(&entries)?;
        let bound = Bound::all(entries)?;
        let ids: Vec<_> = bound.iter().map(Bound::id).collect();
        enqueue::insert(client, &self.sql, bound)
            .await
            .map_err(|e| e.into_outbox(&ids))
    }

    /// Writes one entry; see [`SqlServerWriter::enqueue_in`].
    pub async fn enqueue_one_in<S>(
        &self,
        client: &mut Client<S>,
        entry: NewEntry,
    ) -> Result<OutboxEntry>
    where
        S: AsyncRead + AsyncWrite + Unpin + Send,
    {
        let mut written = self.enqueue_in(client, vec![entry]).await?;
        Ok(written.remove(0))
    }
}
