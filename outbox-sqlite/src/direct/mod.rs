//! The store's own connection: claims, completions and renewals (the drain's path) run on
//! one `rusqlite` connection that a thread of its own owns, with no pool and no async
//! driver between the store and SQLite.
//!
//! Why not the pool: sqlx runs each SQLite connection on a worker thread and hands every
//! statement, bound value and row across it, one message at a time; for a drain that is
//! most of the time an entry costs. Here a whole call (begin, statements, commit, and the
//! reads that judge refused writes) is one job sent to the thread, and its answer comes
//! back as one value.
//!
//! How it shares the file with the pool: both link the same SQLite (sqlx and rusqlite
//! build on one `libsqlite3-sys`), and this connection is opened on the file the pool's
//! own connections have open (SQLite's `pragma_database_list` names it, attached databases
//! included), so they meet at SQLite's file locks like any two connections in WAL mode:
//! one writer at a time, readers never blocked. Host transactions, enqueue, operator
//! writes and migrations stay on the pool.
//!
//! Cancellation: a caller that drops its call drops only its wait for the answer. A job
//! that started runs to its end on the thread (the transaction commits or rolls back), and
//! the next job finds the connection outside any transaction; a job whose caller was gone
//! before it started is not run.
//!
//! Failures: SQLite itself says whether a transaction is still open on the connection
//! (`sqlite3_get_autocommit`), so after a failed statement or `COMMIT` (a full disk, a
//! failing file system) the transaction is rolled back if SQLite left it open, and the
//! connection is closed if even that fails; the next job opens a fresh one. A job that
//! panics is contained the same way, and the thread goes on.
//!
//! Every statement a call runs on the connection is logged as a `DEBUG` event of target
//! [`STATEMENT_TARGET`] with its text in the `db.statement` field, as it is about to run
//! (sqlx logs the pool's once they ran); the settings applied when the connection opens
//! are not.

mod open;
pub(crate) mod row;
pub(crate) mod shared_locks;
mod turns;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::Arc;

use outbox_core::{OutboxError, Result};
use rusqlite::Connection;

use crate::error::{map_direct, naming_the_file};
pub(crate) use open::Opener;
use turns::{Beside, Turns};

/// The `tracing` target of the statements the store's own connection runs for the drain
/// (claims, completions, renewals and the reads that judge refused writes), logged at
/// `DEBUG` with the statement's text in the `db.statement` field. The pool's statements are
/// sqlx's own (`sqlx::query`).
pub const STATEMENT_TARGET: &str = "outbox_sqlite::statement";

/// Logs `sql` as a statement the connection is about to run.
fn log(sql: &str) {
    tracing::event!(target: STATEMENT_TARGET, tracing::Level::DEBUG, db.statement = sql);
}

/// Prepares `sql` on `conn` (from the connection's statement cache) and logs it: every
/// statement with parameters or rows goes through here, once per run.
pub(crate) fn statement<'c>(
    conn: &'c Connection,
    sql: &str,
) -> Result<rusqlite::CachedStatement<'c>> {
    log(sql);
    conn.prepare_cached(sql).map_err(map_direct)
}

/// Runs `sql`, a statement with no parameters and no rows, on `conn` and logs it.
fn execute(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    log(sql);
    conn.execute_batch(sql)
}

/// One call's work on the connection, with its answer sent from inside.
type Job = Box<dyn FnOnce(&mut Session) + Send>;

/// The handle to the store's own connection thread. Cheap to clone; the thread ends and
/// closes its connection once the last handle is gone.
#[derive(Clone)]
pub(crate) struct Direct {
    jobs: mpsc::Sender<Job>,
    file: Arc<PathBuf>,
    /// When the connection last waited for another writer's lock (turns.rs).
    beside: Arc<Beside>,
}

impl std::fmt::Debug for Direct {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Direct").field("file", &self.file).finish()
    }
}

impl Direct {
    /// Starts the thread and opens its connection with `opener`; fails as the open does.
    pub(crate) async fn start(opener: Opener) -> Result<Self> {
        let file = Arc::new(opener.file().to_path_buf());
        let (jobs, queue) = mpsc::channel::<Job>();
        let (opened, answer) = tokio::sync::oneshot::channel();
        let turns = Turns::default();
        let beside = turns.beside();
        std::thread::Builder::new()
            .name("outbox-sqlite".into())
            .spawn(move || {
                let mut session = Session {
                    conn: None,
                    opener,
                    turns,
                };
                let _ = opened.send(session.connection().map(drop));
                for job in queue {
                    job(&mut session);
                }
            })
            .map_err(|e| OutboxError::Connection {
                message: format!("cannot start the SQLite store's connection thread: {e}"),
                source: Some(Box::new(e)),
            })?;
        answer.await.map_err(|_| thread_gone())??;
        Ok(Self { jobs, file, beside })
    }

    /// Whether the connection waited for another writer's write lock lately (see
    /// turns.rs).
    pub(crate) fn writers_beside(&self) -> bool {
        self.beside.lately()
    }

    /// Runs `work` on the connection's thread and waits for its answer. Dropping the
    /// returned future stops the wait, not the work.
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Session) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let (answer, answered) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move |session| {
            if answer.is_closed() {
                // The caller was gone before the call started: nothing to run it for
                // (a claim would only lease rows nobody emits).
                return;
            }
            let result = catch_unwind(AssertUnwindSafe(|| work(session)));
            if result.is_err() {
                // Whatever the panic left open is undone before the next job.
                session.reset();
            }
            let _ = answer.send(result.unwrap_or_else(|_| Err(panicked())));
        });
        self.jobs.send(job).map_err(|_| thread_gone())?;
        answered.await.map_err(|_| thread_gone())?
    }
}

/// The connection as the thread holds it: open, or to be opened by the next job.
pub(crate) struct Session {
    conn: Option<Connection>,
    opener: Opener,
    /// Its turns at the write lock beside other writers.
    turns: Turns,
}

impl Session {
    /// Runs `work` in an immediate transaction (the write lock taken at once, after the
    /// rest the connection owes writers beside it, turns.rs): commits
    /// when it succeeds, rolls back when it fails, and passes its result through, or the
    /// `COMMIT`'s error. Errors about the file name it.
    pub(crate) fn write<T>(&mut self, work: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        let file = self.opener.file().to_path_buf();
        let named = |e: OutboxError| naming_the_file(e, &file);
        // An open that fails names the file already.
        self.connection()?;
        self.turns.wait_for_turn();
        let conn = self.conn.as_ref().expect("opened above");
        // A BEGIN that fails (the lock stayed busy past the timeout) starts nothing.
        let asked = std::time::Instant::now();
        let began = execute(conn, "BEGIN IMMEDIATE").map_err(|e| named(map_direct(e)));
        self.turns.began(asked.elapsed());
        began?;
        let held = std::time::Instant::now();
        let result = work(conn)
            .and_then(|value| execute(conn, "COMMIT").map(|()| value).map_err(map_direct));
        if result.is_err() {
            self.reset();
        }
        self.turns.ended(held);
        result.map_err(named)
    }

    /// Takes the write lock and keeps it after the job, until [`Session::reset`] (the
    /// probe of shared_locks.rs).
    pub(crate) fn hold_write_lock(&mut self) -> Result<()> {
        let file = self.opener.file().to_path_buf();
        execute(self.connection()?, "BEGIN IMMEDIATE")
            .map_err(|e| naming_the_file(map_direct(e), &file))
    }

    /// The open connection, opening it first if there is none.
    fn connection(&mut self) -> Result<&Connection> {
        if self.conn.is_none() {
            self.conn = Some(self.opener.open()?);
        }
        Ok(self.conn.as_ref().expect("opened above"))
    }

    /// Ends whatever transaction a failed job left open; closes the connection when
    /// SQLite still reports one after the `ROLLBACK` (the next job opens a fresh one).
    pub(crate) fn reset(&mut self) {
        let Some(conn) = &self.conn else { return };
        if conn.is_autocommit() {
            return;
        }
        let undone = execute(conn, "ROLLBACK");
        if undone.is_err() || !conn.is_autocommit() {
            tracing::warn!(
                error = ?undone.err(),
                "the SQLite store's connection could not roll back a failed transaction; it is closed and opened afresh"
            );
            self.conn = None;
        }
    }
}

fn thread_gone() -> OutboxError {
    OutboxError::Connection {
        message: "the SQLite store's connection thread is gone".into(),
        source: None,
    }
}

fn panicked() -> OutboxError {
    OutboxError::Database {
        message:
            "a call on the SQLite store's connection panicked; its transaction was rolled back"
                .into(),
        source: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn started(dir: &tempfile::TempDir) -> Direct {
        let url = dir.path().join("t.db");
        let config = crate::SqliteStoreConfig::new();
        let pool = crate::SqliteClaimStore::open_pool(url.to_str().unwrap(), &config)
            .await
            .unwrap();
        sqlx::query("CREATE TABLE t (x INTEGER)")
            .execute(&pool)
            .await
            .unwrap();
        Direct::start(Opener::of_pool(&pool, &config).await.unwrap())
            .await
            .unwrap()
    }

    fn count(conn: &Connection) -> Result<i64> {
        conn.query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .map_err(map_direct)
    }

    #[tokio::test]
    async fn failed_work_is_rolled_back_and_the_next_call_runs_outside_a_transaction() {
        let dir = tempfile::tempdir().unwrap();
        let direct = started(&dir).await;
        let failed = direct
            .run(|s| {
                s.write(|conn| {
                    conn.execute("INSERT INTO t VALUES (1)", [])
                        .map_err(map_direct)?;
                    Err::<(), _>(OutboxError::invalid("test", "refused"))
                })
            })
            .await;
        assert!(failed.is_err());
        let (rows, outside) = direct
            .run(|s| {
                let outside = s.connection()?.is_autocommit();
                Ok((s.write(count)?, outside))
            })
            .await
            .unwrap();
        assert!(outside, "the failed call left its transaction open");
        assert_eq!(rows, 0, "the failed call's write was committed");
    }

    #[tokio::test]
    async fn a_panicking_call_is_contained_and_its_write_undone() {
        let dir = tempfile::tempdir().unwrap();
        let direct = started(&dir).await;
        let panicked = direct
            .run(|s| {
                s.write(|conn| -> Result<()> {
                    conn.execute("INSERT INTO t VALUES (1)", [])
                        .map_err(map_direct)?;
                    panic!("a bug in a call");
                })
            })
            .await
            .unwrap_err();
        assert!(panicked.to_string().contains("panicked"), "{panicked}");
        let rows = direct.run(|s| s.write(count)).await.unwrap();
        assert_eq!(rows, 0, "the panicking call's write was committed");
        direct
            .run(|s| {
                s.write(|conn| {
                    conn.execute("INSERT INTO t VALUES (2)", [])
                        .map_err(map_direct)
                })
            })
            .await
            .expect("the thread goes on after a panic");
        assert_eq!(direct.run(|s| s.write(count)).await.unwrap(), 1);
    }

    #[tokio::test]
    async fn a_dropped_call_still_runs_to_its_end() {
        let dir = tempfile::tempdir().unwrap();
        let direct = started(&dir).await;
        let call = direct.run(|s| {
            s.write(|conn| {
                std::thread::sleep(std::time::Duration::from_millis(100));
                conn.execute("INSERT INTO t VALUES (1)", [])
                    .map_err(map_direct)
            })
        });
        // Polled once (the job is sent), then dropped.
        let _ = tokio::time::timeout(std::time::Duration::from_millis(10), call).await;
        let rows = direct.run(|s| s.write(count)).await.unwrap();
        assert_eq!(rows, 1, "the dropped call was cut short");
    }
}
