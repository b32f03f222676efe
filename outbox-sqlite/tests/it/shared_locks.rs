//! A pool whose locks the store's own connection would not share is refused when the
//! store starts, before anything is claimed: one in `locking_mode=EXCLUSIVE`, and one
//! opening the file through a VFS that locks otherwise (`unix-dotfile`) or not at all
//! (`unix-none`), where the two connections would each take the write lock and write the
//! file at once.

use std::str::FromStr;

use outbox_core::{NewEntry, OutboxError, TableName};
use outbox_sqlite::{SqliteClaimStore, SqliteStoreConfig, SqliteWriter};
use sqlx::sqlite::{SqliteConnectOptions, SqliteLockingMode, SqlitePool, SqlitePoolOptions};

/// A store file with three pending entries, in the rollback journal mode (the store's
/// own pools use WAL, which SQLite's other Unix VFSes cannot open), and its path: as a
/// host's own pool might leave it. Written on one connection, through the host's writer,
/// which then leaves WAL (only a file's sole connection may) and closes. The pools below
/// set no journal mode, so none of them waits on another to change it.
async fn file_with_entries() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("outbox.db").to_str().unwrap().to_owned();
    let config = SqliteStoreConfig::new().max_connections(1);
    let pool = SqliteClaimStore::open_pool(&path, &config).await.unwrap();
    outbox_sqlite::migrate(&pool, &TableName::default())
        .await
        .unwrap();
    let entries = (0..3)
        .map(|n| NewEntry::new("t", format!("{n}").into_bytes()))
        .collect();
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await.unwrap();
    SqliteWriter::new(&TableName::default())
        .enqueue_in(&mut tx, entries)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    sqlx::query("PRAGMA journal_mode = DELETE")
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
    (dir, path)
}

/// The entries still pending and unleased.
async fn untouched(path: &str) {
    let reader = pool(SqliteConnectOptions::new().filename(path), 1).await;
    let rows: Vec<(i64, Option<i64>)> =
        sqlx::query_as("SELECT status, claim_expires_at FROM outbox")
            .fetch_all(&reader)
            .await
            .unwrap();
    assert_eq!(rows.len(), 3);
    for (status, lease) in rows {
        assert_eq!(status, 0, "pending");
        assert_eq!(lease, None, "nothing was claimed");
    }
    reader.close().await;
}

/// A pool of `connections` on `options`.
async fn pool(options: SqliteConnectOptions, connections: u32) -> SqlitePool {
    SqlitePoolOptions::new()
        .max_connections(connections)
        .connect_with(options)
        .await
        .unwrap()
}

/// The store refuses `pool` with an error that says `says`, and the entries of the file
/// at `path` are left as they were.
async fn refused(pool: SqlitePool, path: &str, says: &str) {
    let err = SqliteClaimStore::new(pool.clone(), SqliteStoreConfig::new())
        .await
        .unwrap_err();
    assert!(matches!(err, OutboxError::InvalidInput { .. }), "{err}");
    assert!(err.to_string().contains(says), "{err}");
    pool.close().await;
    untouched(path).await;
}

#[tokio::test]
async fn a_pool_in_exclusive_locking_mode_is_refused() {
    let (_dir, path) = file_with_entries().await;
    let options = SqliteConnectOptions::new()
        .filename(&path)
        .locking_mode(SqliteLockingMode::Exclusive);
    refused(pool(options, 1).await, &path, "locking_mode=EXCLUSIVE").await;
}

/// A host's pool opening the file through `vfs`.
async fn refused_with_vfs(vfs: &str) {
    let (_dir, path) = file_with_entries().await;
    let url = format!("sqlite://{path}?vfs={vfs}");
    let options = SqliteConnectOptions::from_str(&url).unwrap();
    refused(pool(options, 2).await, &path, "not seen by the pool").await;
}

#[tokio::test]
async fn a_pool_locking_through_another_vfs_is_refused() {
    refused_with_vfs("unix-dotfile").await;
}

#[tokio::test]
async fn a_pool_whose_vfs_does_not_lock_is_refused() {
    refused_with_vfs("unix-none").await;
}

/// The same file in the same rollback journal mode through SQLite's default VFS: the
/// locks are shared, and the store starts.
#[tokio::test]
async fn a_pool_in_a_rollback_journal_mode_on_the_default_vfs_is_taken() {
    let (_dir, path) = file_with_entries().await;
    let options = SqliteConnectOptions::new().filename(&path);
    SqliteClaimStore::new(pool(options, 2).await, SqliteStoreConfig::new())
        .await
        .expect("the default VFS shares its locks");
}
