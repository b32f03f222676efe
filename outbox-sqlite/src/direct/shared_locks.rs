//! Whether the store's own connection and the pool's lock the file against each other.
//!
//! Both write one file: the host's transactions on the pool's connections, the drain's
//! calls on the store's own. That is safe only while each sees the other's locks. Two
//! pool settings break it, and the store refuses them when it starts, before it writes:
//! - `locking_mode=EXCLUSIVE`: a pool connection keeps whatever lock it took until it
//!   closes, so the store's connection would wait out its busy timeout on every call;
//! - a VFS other than SQLite's default (the store's connection opens the file with the
//!   default), or one that does not lock at all (`unix-none`): the two would each think
//!   they hold the write lock, and write the file at once.
//!
//! The first is read from the pool (`PRAGMA locking_mode`) before the store's connection
//! opens the file. The second cannot be: SQL does not name a connection's VFS. So it is
//! tried once that connection is open: it takes the write lock, and a pool connection must
//! then be refused it at once. (The store's own pools are in WAL mode, which SQLite's
//! other Unix VFSes cannot open at all; a host's pool in a rollback journal mode can.)

use outbox_core::{OutboxError, Result};
use sqlx::SqlitePool;

use super::Direct;
use crate::error::map_err;

/// SQLite's code for a lock held elsewhere.
const BUSY: &str = "5";

/// Refuses a pool in `locking_mode=EXCLUSIVE`, read on one of its connections before the
/// store's own connection opens the file (which such a pool would keep locked).
pub(crate) async fn check_locking_mode(conn: &mut sqlx::SqliteConnection) -> Result<()> {
    let (mode,): (String,) = sqlx::query_as("PRAGMA locking_mode")
        .fetch_one(&mut *conn)
        .await
        .map_err(map_err)?;
    if mode.eq_ignore_ascii_case("exclusive") {
        return Err(OutboxError::invalid(
            "database",
            "the pool's connections use locking_mode=EXCLUSIVE, which keeps the file locked \
             against the store's own connection: open them in the normal locking mode",
        ));
    }
    Ok(())
}

/// Refuses a pool that does not see the write lock of the store's own connection (see the
/// module docs): takes that lock for a moment, then lets it go; writes nothing.
pub(crate) async fn check(pool: &SqlitePool, direct: &Direct) -> Result<()> {
    let mut conn = pool.acquire().await.map_err(map_err)?;
    direct.run(|session| session.hold_write_lock()).await?;
    let tried = try_write_lock(&mut conn).await;
    let released = direct
        .run(|session| {
            session.reset();
            Ok(())
        })
        .await;
    // The probe changed the connection's busy timeout: it is closed, not given back.
    let _ = conn.close().await;
    released?;
    if tried? {
        return Err(OutboxError::invalid(
            "database",
            "a write lock held by the store's own connection is not seen by the pool's \
             connections: they open the file through a VFS other than SQLite's default, or \
             one that does not lock, and the two would write it at once. Open the pool with \
             SQLite's default VFS",
        ));
    }
    Ok(())
}

/// Tries to take the write lock on `conn` without waiting: `true` when it was taken (and
/// let go again), `false` when it was held elsewhere.
async fn try_write_lock(conn: &mut sqlx::SqliteConnection) -> Result<bool> {
    sqlx::query("PRAGMA busy_timeout = 0")
        .execute(&mut *conn)
        .await
        .map_err(map_err)?;
    match sqlx::query("BEGIN IMMEDIATE").execute(&mut *conn).await {
        Ok(_) => {
            sqlx::query("ROLLBACK")
                .execute(&mut *conn)
                .await
                .map_err(map_err)?;
            Ok(true)
        }
        Err(sqlx::Error::Database(e)) if e.code().as_deref() == Some(BUSY) => Ok(false),
        Err(e) => Err(map_err(e)),
    }
}
