//! How the store's own connection is opened: on the file the pool's connections have open,
//! with the same attached databases (file-backed ones), the pool's `synchronous` level and
//! read-only state, and the store's busy timeout, cache and memory map.

use std::path::{Path, PathBuf};
use std::time::Duration;

use outbox_core::{OutboxError, Result};
use rusqlite::{Connection, OpenFlags};
use sqlx::{Row, SqlitePool};

use crate::error::{map_direct, map_err, naming_the_file};
use crate::SqliteStoreConfig;

use super::shared_locks;

/// Prepared statements the connection keeps: the drain's few, in both slice forms.
const CACHED_STATEMENTS: usize = 32;

/// Everything needed to open (and, after a failure, reopen) the connection.
pub(crate) struct Opener {
    file: PathBuf,
    attached: Vec<(String, PathBuf)>,
    read_only: bool,
    /// The pool's `synchronous` level, kept on this connection.
    synchronous: i64,
    busy_timeout: Duration,
    mmap_bytes: u64,
    cache_kib: u32,
}

impl Opener {
    /// Reads from one of `pool`'s connections which file it has open and which databases
    /// are attached to it. An in-memory database has no file another connection could
    /// open, so it is refused.
    pub(crate) async fn of_pool(pool: &SqlitePool, config: &SqliteStoreConfig) -> Result<Self> {
        let mut conn = pool.acquire().await.map_err(map_err)?;
        let rows = sqlx::query("SELECT name, file FROM pragma_database_list")
            .fetch_all(&mut *conn)
            .await
            .map_err(map_err)?;
        // The pool's durability and read-only settings, so the store's connection writes
        // as the pool's would: synchronous (0 OFF … 3 EXTRA) and query_only.
        let (synchronous, query_only): (i64, i64) = sqlx::query_as(
            "SELECT synchronous, query_only FROM pragma_synchronous, pragma_query_only",
        )
        .fetch_one(&mut *conn)
        .await
        .map_err(map_err)?;
        shared_locks::check_locking_mode(&mut conn).await?;
        drop(conn);
        let mut file = None;
        let mut attached = Vec::new();
        for row in rows {
            let name: String = row.try_get("name").map_err(map_err)?;
            let path: String = row.try_get("file").map_err(map_err)?;
            if name == "temp" {
                continue;
            }
            if name == "main" && path.is_empty() {
                return Err(OutboxError::invalid(
                    "database",
                    "an in-memory SQLite database: the store needs a database file, which \
                     its own connection opens beside the pool's",
                ));
            }
            if path.is_empty() {
                // An attached in-memory database is the pool's own scratch space; the
                // store's connection cannot share it (an outbox table in it is not found).
                continue;
            }
            if name == "main" {
                file = Some(PathBuf::from(path));
            } else {
                attached.push((name, PathBuf::from(path)));
            }
        }
        let file = file.ok_or_else(|| OutboxError::Database {
            message: "SQLite listed no main database on the pool's connection".into(),
            source: None,
        })?;
        Ok(Self {
            file,
            attached,
            read_only: config.read_only || query_only != 0,
            synchronous,
            busy_timeout: config.busy_timeout,
            mmap_bytes: config.mmap_bytes,
            cache_kib: config.cache_kib,
        })
    }

    /// Whether the connection only reads (the store's `read_only`, or the pool's
    /// `query_only`).
    pub(crate) fn read_only(&self) -> bool {
        self.read_only
    }

    /// The main database file.
    pub(crate) fn file(&self) -> &Path {
        &self.file
    }

    /// Opens the connection; errors about the file name it.
    pub(crate) fn open(&self) -> Result<Connection> {
        self.try_open()
            .map_err(|e| naming_the_file(map_direct(e), &self.file))
    }

    fn try_open(&self) -> rusqlite::Result<Connection> {
        let access = if self.read_only {
            OpenFlags::SQLITE_OPEN_READ_ONLY
        } else {
            OpenFlags::SQLITE_OPEN_READ_WRITE
        };
        let conn =
            Connection::open_with_flags(&self.file, access | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
        conn.busy_timeout(self.busy_timeout)?;
        conn.set_prepared_statement_cache_capacity(CACHED_STATEMENTS);
        conn.pragma_update(None, "mmap_size", self.mmap_bytes)?;
        conn.pragma_update(None, "cache_size", -i64::from(self.cache_kib))?;
        if !self.read_only {
            conn.pragma_update(None, "synchronous", self.synchronous)?;
        }
        for (name, path) in &self.attached {
            let quoted = name.replace('"', "\"\"");
            conn.execute(
                &format!("ATTACH DATABASE ?1 AS \"{quoted}\""),
                [path.to_string_lossy()],
            )?;
        }
        Ok(conn)
    }
}
