//! A disk that fills up under the store (issue #30): every call that meets it fails with
//! `SQLITE_FULL` and writes nothing, and once space returns the same store, on the same
//! pooled connections, goes on as if nothing had happened.

use outbox_core::TableName;
use outbox_core::{ClaimStore, EmissionStatus, OutboxAdmin, OutboxError, OutboxStore};
use outbox_sqlite::{SqliteClaimStore, SqliteStoreConfig};
use outbox_testkit::fixtures::{claim_req, delivered_at, new_entry, t0};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode};
use sqlx::{Connection, SqliteConnection};

use crate::tmpfs::{truncate_wal, Tmpfs};

/// SQLite's primary result code for a full disk.
const SQLITE_FULL: i64 = 13;

/// Asserts that `err` is SQLite's `SQLITE_FULL`, by its code, as either driver reports it
/// (sqlx on the pool, rusqlite on the store's own connection).
pub(crate) fn assert_disk_full(what: &str, err: &OutboxError) {
    let code = match err {
        OutboxError::Database {
            source: Some(source),
            ..
        } => {
            let by_sqlx = source
                .downcast_ref::<sqlx::Error>()
                .and_then(|e| e.as_database_error())
                .and_then(|db| db.code())
                .and_then(|c| c.parse::<i64>().ok());
            let by_rusqlite = match source.downcast_ref::<rusqlite::Error>() {
                Some(rusqlite::Error::SqliteFailure(failure, _)) => {
                    Some(i64::from(failure.extended_code))
                }
                _ => None,
            };
            by_sqlx.or(by_rusqlite)
        }
        _ => None,
    };
    assert_eq!(
        code,
        Some(SQLITE_FULL),
        "{what} should fail with SQLITE_FULL, got: {err:?}"
    );
}

#[tokio::test]
async fn a_store_that_met_a_full_disk_serves_again_once_space_returns() {
    let Some(fs) = Tmpfs::mount("3m") else { return };
    // One connection: the one that meets the full disk is the one every later call gets.
    let store = fs.store(SqliteStoreConfig::new().max_connections(1)).await;
    store
        .enqueue_batch((0..100).map(|i| new_entry(i - 100)).collect())
        .await
        .unwrap();
    let claims = store
        .claim_pending(&claim_req("worker", 10, t0()))
        .await
        .unwrap();
    truncate_wal(store.pool()).await;
    let filler = fs.fill();

    let err = store
        .complete_batch(delivered_at(&claims, t0()))
        .await
        .unwrap_err();
    assert_disk_full("a completion on a full disk", &err);
    let err = store
        .claim_pending(&claim_req("worker", 10, t0()))
        .await
        .unwrap_err();
    assert_disk_full("a claim on a full disk", &err);
    let told = err.to_string();
    assert!(
        told.contains(&fs.db().display().to_string()) && told.contains("disk holding it is full"),
        "the error does not say which file's disk is full: {told}"
    );

    std::fs::remove_file(filler).unwrap();
    let results = store
        .complete_batch(delivered_at(&claims, t0()))
        .await
        .expect("the completion, sent again once space returned");
    assert!(results.iter().all(|r| r.is_applied()), "{results:?}");
    let rest = store
        .claim_pending(&claim_req("worker", 100, t0()))
        .await
        .expect("a claim once space returned");
    assert_eq!(rest.len(), 90, "the failed claim took nothing");
    store
        .complete_batch(delivered_at(&rest, t0()))
        .await
        .unwrap();
    let stats = store
        .stats(&outbox_core::StatsRequest::new().at(t0()))
        .await
        .unwrap();
    assert_eq!(stats.counts[&EmissionStatus::Delivered], 100);
}

/// A batch far larger than the space left: it cannot all fit, whichever statement or the
/// COMMIT meets the full disk.
fn big_batch() -> Vec<outbox_core::NewEntry> {
    (0..1_000)
        .map(|i| outbox_core::NewEntry::new("orders", vec![u8::try_from(i % 251).unwrap(); 1_024]))
        .collect()
}

async fn rows(store: &outbox_sqlite::SqliteClaimStore) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM outbox")
        .fetch_one(store.pool())
        .await
        .unwrap()
}

#[tokio::test]
async fn an_enqueue_the_disk_cannot_hold_is_refused_whole_and_the_next_one_works() {
    let Some(fs) = Tmpfs::mount("3m") else { return };
    let store = fs.store(SqliteStoreConfig::new().max_connections(1)).await;
    store
        .enqueue_batch((0..10).map(|i| new_entry(i - 10)).collect())
        .await
        .unwrap();
    truncate_wal(store.pool()).await;
    let filler = fs.fill_but(64 * 1024);

    let err = store.enqueue_batch(big_batch()).await.unwrap_err();
    assert_disk_full("an enqueue larger than the space left", &err);
    assert_eq!(rows(&store).await, 10, "a refused batch left rows behind");

    std::fs::remove_file(filler).unwrap();
    let written = store
        .enqueue_batch(big_batch())
        .await
        .expect("the same batch once space returned");
    assert_eq!(written.len(), 1_000);
    assert_eq!(rows(&store).await, 1_010);
}

#[tokio::test]
async fn a_host_transaction_that_met_a_full_disk_does_not_spoil_the_pool() {
    let Some(fs) = Tmpfs::mount("3m") else { return };
    let store = fs.store(SqliteStoreConfig::new().max_connections(1)).await;
    truncate_wal(store.pool()).await;
    let filler = fs.fill_but(64 * 1024);

    // The host's own transaction, with the outbox write in it, the way the docs show it.
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await.unwrap();
    let err = match store.writer().enqueue_in(&mut tx, big_batch()).await {
        Err(e) => {
            // The host gives up on it; SQLite may already have ended it, so this may fail.
            let _ = tx.rollback().await;
            e
        }
        Ok(_) => tx
            .commit()
            .await
            .map_err(|e| OutboxError::Database {
                message: e.to_string(),
                source: Some(Box::new(e)),
            })
            .expect_err("a COMMIT larger than the space left"),
    };
    assert_disk_full("a host transaction larger than the space left", &err);
    assert_eq!(
        rows(&store).await,
        0,
        "a refused host transaction left rows"
    );

    std::fs::remove_file(filler).unwrap();
    let mut tx = store
        .pool()
        .begin_with("BEGIN IMMEDIATE")
        .await
        .expect("the pool's connection, once space returned");
    store
        .writer()
        .enqueue_in(&mut tx, big_batch())
        .await
        .unwrap();
    tx.commit().await.unwrap();
    store.enqueue_batch(big_batch()).await.unwrap();
    assert_eq!(rows(&store).await, 2_000);
}

#[tokio::test]
async fn the_portable_store_hands_back_no_connection_a_full_disk_left_in_a_transaction() {
    use outbox_core::portable::PortableConfig;
    use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions};

    let Some(fs) = Tmpfs::mount("3m") else { return };
    // The host's own pool, with none of the checks the SQLite store adds to its pools.
    let options = SqliteConnectOptions::new()
        .filename(fs.db())
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal);
    let pool = SqlitePoolOptions::new()
        .max_connections(1)
        .connect_with(options)
        .await
        .unwrap();
    outbox_sqlite::migrate(&pool, &outbox_core::TableName::default())
        .await
        .unwrap();
    let store = outbox_sqlite::portable_store(pool.clone(), PortableConfig::default())
        .await
        .unwrap();
    truncate_wal(&pool).await;
    let filler = fs.fill_but(64 * 1024);

    let err = store.enqueue_batch(big_batch()).await.unwrap_err();
    assert_disk_full("a portable enqueue larger than the space left", &err);

    std::fs::remove_file(filler).unwrap();
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM outbox")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(count, 0, "a refused batch left rows behind");
    // The pool's one connection: a host transaction on it begins as it should.
    let tx = pool
        .begin_with("BEGIN IMMEDIATE")
        .await
        .expect("the pool's connection, once space returned");
    tx.rollback().await.unwrap();
    assert_eq!(store.enqueue_batch(big_batch()).await.unwrap().len(), 1_000);
}

/// `outbox stats` opens the file read-only (no write probe): on a full disk, with the
/// write-ahead log truncated so that any write would have to grow it, a read-only store
/// still opens and reports the counts.
#[tokio::test]
async fn a_read_only_store_opens_and_reads_stats_on_a_full_disk() {
    let Some(fs) = Tmpfs::mount("3m") else { return };
    let store = fs.store(SqliteStoreConfig::new()).await;
    store
        .enqueue_batch((0..100).map(|i| new_entry(i - 100)).collect())
        .await
        .unwrap();
    truncate_wal(store.pool()).await;
    let _filler = fs.fill();
    let err = store
        .claim_pending(&claim_req("worker", 10, t0()))
        .await
        .unwrap_err();
    assert_disk_full("a claim on the full disk", &err);

    let url = fs.db().to_str().expect("utf-8 path").to_owned();
    let reader =
        outbox_sqlite::SqliteClaimStore::open(&url, SqliteStoreConfig::new().read_only(true))
            .await
            .expect("a read-only open on a full disk");
    let stats = reader
        .stats(&outbox_core::StatsRequest::new())
        .await
        .expect("stats on a full disk");
    assert_eq!(stats.counts[&EmissionStatus::Pending], 100, "{stats:?}");
}

/// SQLite cannot open a WAL database that no process has open without room for its
/// shared-memory file: a drain started on a full disk stops at once with an error naming
/// the file and the full disk (a supervisor restarts it), and starts once there is room.
#[tokio::test]
async fn a_store_opened_on_a_full_disk_says_so_and_opens_once_space_returns() {
    let Some(fs) = Tmpfs::mount("3m") else { return };
    // The file as a process that stopped left it: migrated, 100 entries, every connection
    // closed (the last close removes the log and the shared-memory file). One connection,
    // closed explicitly: a pool closes its connections in the background.
    let options = SqliteConnectOptions::new()
        .filename(fs.db())
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal);
    let mut conn = SqliteConnection::connect_with(&options).await.unwrap();
    sqlx::raw_sql(&outbox_sqlite::migration_script(&TableName::default()))
        .execute(&mut conn)
        .await
        .unwrap();
    sqlx::raw_sql(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100) \
         INSERT INTO outbox (id, topic, payload, created_at, updated_at, stamp) \
         SELECT randomblob(16), 't', x'00', i, i, randomblob(16) FROM n",
    )
    .execute(&mut conn)
    .await
    .unwrap();
    conn.close().await.unwrap();
    assert!(!fs.path().join("outbox.db-shm").exists());
    let filler = fs.fill();

    // What `outbox drain` does first.
    let url = fs.db().to_str().expect("utf-8 path").to_owned();
    let Err(err) = SqliteClaimStore::open(&url, SqliteStoreConfig::new()).await else {
        panic!("the store opened on a full disk; SQLite needs room to open the file");
    };
    let told = err.to_string();
    assert!(
        matches!(err, OutboxError::Connection { .. })
            && told.contains(&url)
            && told.contains("no room on its disk"),
        "{told}"
    );
    std::fs::remove_file(filler).unwrap();
    let store = SqliteClaimStore::open(&url, SqliteStoreConfig::new())
        .await
        .expect("the store opens once space returned");
    let claims = store
        .claim_pending(&claim_req("worker", 100, t0()))
        .await
        .unwrap();
    assert_eq!(claims.len(), 100);
}
