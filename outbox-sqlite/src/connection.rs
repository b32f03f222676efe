//! The store's write transactions on the pool (enqueue, saves, prunes, operator writes,
//! migrations; claims, completions and renewals run on the store's own connection,
//! [`crate::direct`]), and why no pooled connection ever goes back to the pool inside one.
//!
//! When a `COMMIT` fails with `SQLITE_FULL` (or `SQLITE_IOERR`, or a statement inside the
//! transaction does), SQLite may end the transaction itself and roll it back. sqlx's
//! `Transaction` does not know: its depth counter only goes down when a `COMMIT` or
//! `ROLLBACK` succeeds, so after the failed `COMMIT` the dropped `Transaction` queues a
//! `ROLLBACK`, SQLite answers "cannot rollback - no transaction is active", the error has
//! no one to go to, and the connection returns to the pool with sqlx still counting one
//! open transaction on it. Every later `begin_with("BEGIN IMMEDIATE")` on that connection
//! then fails with "attempted to call begin_with at non-zero transaction depth", for as
//! long as the process lives, even once the disk has room again (issue #30).
//!
//! So the store does not use sqlx's transaction bookkeeping for its own transactions. A
//! [`WriteTx`] issues `BEGIN IMMEDIATE`, `COMMIT` and `ROLLBACK` itself, and decides what
//! happens to its connection from what SQLite answered:
//!
//! - committed, or rolled back on request: the connection goes back to the pool;
//! - a failed `COMMIT` or statement is followed by a `ROLLBACK`; if that fails too, SQLite
//!   may or may not still hold a transaction on it, so the connection is closed (SQLite
//!   rolls back whatever was left open) and the pool opens a fresh one;
//! - dropped before it finished (a cancelled future, a panic): closed, never returned.
//!
//! Every error a [`WriteTx`] passes on that is about the file (a full disk, a read-only or
//! failing file system) names the file, so the warning an operator reads says where.
//!
//! Pools the store opens also check every connection the host hands back
//! ([`returned_outside_a_transaction`]): a host transaction whose `COMMIT` met a full
//! disk leaves the same stale count behind, and that connection is closed, not reused.

use std::future::Future;
use std::pin::Pin;

use outbox_core::{OutboxError, Result};
use sqlx::pool::{PoolConnection, PoolConnectionMetadata};
use sqlx::{Connection, Sqlite, SqliteConnection, SqlitePool};

use crate::error::{map_err, naming_the_file};

/// Takes the write lock at once, so a statement never has to upgrade a read lock (which
/// SQLite may refuse without waiting).
const BEGIN: &str = "BEGIN IMMEDIATE";
const COMMIT: &str = "COMMIT";
const ROLLBACK: &str = "ROLLBACK";

/// A write transaction on a pooled connection of its own; end it with
/// [`WriteTx::finish`]. Dereferences to the connection for the transaction's statements.
pub(crate) struct WriteTx {
    conn: PoolConnection<Sqlite>,
    /// The pool, for the file's name on an error.
    pool: SqlitePool,
    /// Whether the connection is known to hold no transaction (it may go back).
    clean: bool,
}

impl WriteTx {
    /// Takes a connection from `pool` and begins an immediate transaction on it.
    pub(crate) async fn begin(pool: &SqlitePool) -> Result<Self> {
        let conn = pool
            .acquire()
            .await
            .map_err(|e| naming_the_file(map_err(e), pool.connect_options().get_filename()))?;
        if conn.is_in_transaction() {
            // A pool the host built without our check can hand out a connection a failed
            // host transaction left counted as open: not ours to repair. Closed on drop.
            let mut stale = conn;
            stale.close_on_drop();
            return Err(OutboxError::Database {
                message: "a pooled SQLite connection was handed out inside a transaction \
                          (a host transaction whose COMMIT or ROLLBACK failed); it is closed"
                    .into(),
                source: None,
            });
        }
        // From the BEGIN on until `finish` sees the transaction end, dropping the guard
        // (a cancelled call) closes the connection.
        let mut tx = Self {
            conn,
            pool: pool.clone(),
            clean: false,
        };
        if let Err(e) = tx.run(BEGIN).await {
            // A BEGIN that fails (the lock stayed busy past the timeout) starts nothing.
            tx.clean = true;
            return Err(tx.named(e));
        }
        Ok(tx)
    }

    /// Ends the transaction: commits it when `result` is `Ok`, rolls it back when it is an
    /// error, and passes `result` through (or the `COMMIT`'s error). The connection goes
    /// back to the pool only when SQLite confirmed the transaction's end.
    pub(crate) async fn finish<T>(mut self, result: Result<T>) -> Result<T> {
        let outcome = match result {
            Ok(value) => match self.run(COMMIT).await {
                Ok(()) => {
                    self.clean = true;
                    return Ok(value);
                }
                Err(e) => Err(e),
            },
            Err(e) => Err(e),
        };
        // The transaction failed (a statement, or the COMMIT): undo it, and keep the
        // connection only if SQLite says it did.
        self.clean = self.run(ROLLBACK).await.is_ok();
        outcome.map_err(|e| self.named(e))
    }

    /// Rolls the transaction back whatever `result` says (a probe's write), and passes
    /// `result` through, or the `ROLLBACK`'s error.
    pub(crate) async fn roll_back<T>(mut self, result: Result<T>) -> Result<T> {
        let undone = self.run(ROLLBACK).await;
        self.clean = undone.is_ok();
        result
            .and_then(|value| undone.map(|()| value))
            .map_err(|e| self.named(e))
    }

    /// `err`, naming the database file when it is about the file.
    fn named(&self, err: OutboxError) -> OutboxError {
        naming_the_file(err, self.pool.connect_options().get_filename())
    }

    async fn run(&mut self, sql: &str) -> Result<()> {
        sqlx::query(sql)
            .execute(&mut *self.conn)
            .await
            .map(drop)
            .map_err(map_err)
    }
}

impl std::ops::Deref for WriteTx {
    type Target = SqliteConnection;

    fn deref(&self) -> &Self::Target {
        &self.conn
    }
}

impl std::ops::DerefMut for WriteTx {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.conn
    }
}

impl Drop for WriteTx {
    fn drop(&mut self) {
        if !self.clean {
            self.conn.close_on_drop();
        }
    }
}

/// The pool's check of every connection handed back to it (`after_release`): keep it
/// only if sqlx counts no open transaction on it. The ping first lets a rollback that a
/// dropped `Transaction` queued run, so the count is the one it left.
pub(crate) fn returned_outside_a_transaction(
    conn: &mut SqliteConnection,
    _meta: PoolConnectionMetadata,
) -> Pin<Box<dyn Future<Output = std::result::Result<bool, sqlx::Error>> + Send + '_>> {
    Box::pin(async move {
        conn.ping().await?;
        let keep = !conn.is_in_transaction();
        if !keep {
            tracing::warn!(
                "a SQLite connection came back to the pool inside a transaction (a failed \
                 COMMIT or ROLLBACK); it is closed"
            );
        }
        Ok(keep)
    })
}
