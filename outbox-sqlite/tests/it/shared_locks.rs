//! A pool whose locks the store's own connection would not share is refused when the
//! store starts, before anything is claimed: one in `locking_mode=EXCLUSIVE`, and one
//! opening the file through a VFS that locks otherwise (`unix-dotfile`) or not at all
//! (`unix-none`), where the two connections would each take the write lock and write the
//! file at once.

use std::str::FromStr;

use outbox_core::{NewEntry, OutboxError, OutboxStore};
use outbox_sqlite::{SqliteClaimStore, SqliteStoreConfig};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqliteLockingMode, SqlitePoolOptions};

use crate::support::store_at;

/// A store file with three pending entries, and its path.
async fn file_with_entries() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("outbox.db");
    let store = store_at(&path, SqliteStoreConfig::new()).await;
    for n in 0..3 {
        store
            .enqueue(NewEntry::new("t", format!("{n}").into_bytes()))
            .await
            .unwrap();
    }
    store.pool().close().await;
    (dir, path.to_str().unwrap().to_owned())
}

/// The entries still pending and unleased, read on a store opened as usual.
async fn untouched(path: &str) {
    let store = SqliteClaimStore::open(path, SqliteStoreConfig::new())
        .await
        .unwrap();
    let rows: Vec<(i64, Option<i64>)> =
        sqlx::query_as("SELECT status, claim_expires_at FROM outbox")
            .fetch_all(store.pool())
            .await
            .unwrap();
    assert_eq!(rows.len(), 3);
    for (status, lease) in rows {
        assert_eq!(status, 0, "pending");
        assert_eq!(lease, None, "nothing was claimed");
    }
}

#[tokio::test]
async fn a_pool_in_exclusive_locking_mode_is_refused() {
    let (_dir, path) = file_with_entries().await;
    let options = SqliteConnectOptions::new()
        .filename(&path)
        .locking_mode(SqliteLockingMode::Exclusive);
    let pool = SqlitePoolOptions::new()
        .max_connections(1)
        .connect_with(options)
        .await
        .unwrap();
    let err = SqliteClaimStore::new(pool.clone(), SqliteStoreConfig::new())
        .await
        .unwrap_err();
    assert!(matches!(err, OutboxError::InvalidInput { .. }), "{err}");
    assert!(err.to_string().contains("locking_mode=EXCLUSIVE"), "{err}");
    pool.close().await;
    untouched(&path).await;
}

/// A host's pool in a rollback journal mode (the store's own pools use WAL, which these
/// VFSes cannot open), opening the file through `vfs`.
async fn refused_with_vfs(vfs: &str) {
    let (_dir, path) = file_with_entries().await;
    let journal = SqliteConnectOptions::new()
        .filename(&path)
        .journal_mode(SqliteJournalMode::Delete);
    SqlitePoolOptions::new()
        .max_connections(1)
        .connect_with(journal)
        .await
        .unwrap()
        .close()
        .await;
    let url = format!("sqlite://{path}?vfs={vfs}");
    let options = SqliteConnectOptions::from_str(&url)
        .unwrap()
        .journal_mode(SqliteJournalMode::Delete);
    let pool = SqlitePoolOptions::new()
        .max_connections(2)
        .connect_with(options)
        .await
        .unwrap();
    let err = SqliteClaimStore::new(pool.clone(), SqliteStoreConfig::new())
        .await
        .unwrap_err();
    assert!(
        matches!(err, OutboxError::InvalidInput { .. }),
        "{vfs}: {err}"
    );
    assert!(
        err.to_string().contains("not seen by the pool"),
        "{vfs}: {err}"
    );
    pool.close().await;
    untouched(&path).await;
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
    let options = SqliteConnectOptions::new()
        .filename(&path)
        .journal_mode(SqliteJournalMode::Delete);
    let pool = SqlitePoolOptions::new()
        .max_connections(2)
        .connect_with(options)
        .await
        .unwrap();
    SqliteClaimStore::new(pool, SqliteStoreConfig::new())
        .await
        .expect("the default VFS shares its locks");
}
