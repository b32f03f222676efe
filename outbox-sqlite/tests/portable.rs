//! The portable store (`outbox_core::portable`) on real SQLite files: the testkit's
//! portable cases (`portable_suite!`: the suites, the command count from sqlx's statement
//! log, contention, the races, a switch to the optimized store), then what only SQLite
//! has: enqueue inside the host's transaction, a table never migrated, and an enqueue
//! abandoned at its deadline on the file's write lock.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use outbox_core::portable::PortableConfig;
use outbox_core::{async_trait, NewEntry, OutboxError, OutboxStore, TableName};
use outbox_sqlite::{PortableSqliteStore, SqliteBackend};
use outbox_testkit::fixtures::DynStore;
use outbox_testkit::portable_cases::PortableEngine;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::SqlitePool;

/// Opens `path` in WAL mode with a busy timeout, with up to `connections` connections.
async fn open_pool(path: &Path, connections: u32) -> SqlitePool {
    let options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(Duration::from_secs(30));
    SqlitePoolOptions::new()
        .max_connections(connections)
        .connect_with(options)
        .await
        .expect("open the SQLite file")
}

/// A migrated table `table` in a fresh file under `dir`, and a portable store on it.
async fn portable_store(dir: &Path, table: &str, connections: u32) -> PortableSqliteStore {
    let pool = open_pool(&dir.join("outbox.db"), connections).await;
    let table = TableName::new(table).unwrap();
    outbox_sqlite::migrate(&pool, &table).await.unwrap();
    outbox_sqlite::portable_store(pool, PortableConfig::default().table(table))
        .await
        .unwrap()
}

/// SQLite as the portable cases see it: a fresh file per test.
struct Sqlite;

#[async_trait]
impl PortableEngine for Sqlite {
    type Backend = SqliteBackend;
    type Guard = tempfile::TempDir;
    const NAME: &'static str = "portable-sqlite";
    const RACE_CONNECTIONS: u32 = 8;

    async fn database() -> Option<tempfile::TempDir> {
        Some(tempfile::tempdir().unwrap())
    }

    async fn store(dir: &tempfile::TempDir, table: &str, connections: u32) -> PortableSqliteStore {
        portable_store(dir.path(), table, connections).await
    }

    async fn enable_ordered_claims(_: &tempfile::TempDir, store: &PortableSqliteStore) {
        outbox_sqlite::enable_ordered_claims(store.backend().pool(), store.table())
            .await
            .unwrap();
    }

    async fn erase_slice_hashes(_: &tempfile::TempDir, store: &PortableSqliteStore) {
        let sql = store.table().render("UPDATE {table} SET slice_hash = NULL");
        sqlx::query(&sql)
            .execute(store.backend().pool())
            .await
            .unwrap();
    }

    async fn optimized(_: &tempfile::TempDir, store: &PortableSqliteStore) -> DynStore {
        let config = outbox_sqlite::SqliteStoreConfig::default().table(store.table().clone());
        let optimized =
            outbox_sqlite::SqliteClaimStore::new(store.backend().pool().clone(), config)
                .await
                .unwrap();
        Arc::new(optimized)
    }
}

outbox_testkit::portable_suite!(Sqlite);

/// The outbox rows of a host transaction commit and roll back with the host's own rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enqueue_in_the_host_transaction_commits_or_rolls_back_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = portable_store(dir.path(), "outbox", 2).await;
    let pool = store.backend().pool().clone();
    sqlx::raw_sql("CREATE TABLE orders (id INTEGER PRIMARY KEY)")
        .execute(&pool)
        .await
        .unwrap();
    let count = |sql: &'static str| {
        let pool = pool.clone();
        async move {
            sqlx::query_scalar::<_, i64>(sql)
                .fetch_one(&pool)
                .await
                .unwrap()
        }
    };

    let mut tx = pool.begin().await.unwrap();
    sqlx::query("INSERT INTO orders (id) VALUES (1)")
        .execute(&mut *tx)
        .await
        .unwrap();
    let doomed = store
        .enqueue_in(&mut *tx, vec![NewEntry::new("orders", b"1".to_vec())])
        .await
        .unwrap();
    tx.rollback().await.unwrap();
    assert_eq!(store.get(doomed[0].id).await.unwrap(), None);
    assert_eq!(count("SELECT count(*) FROM orders").await, 0);
    assert_eq!(count("SELECT count(*) FROM outbox").await, 0);

    let mut tx = pool.begin().await.unwrap();
    sqlx::query("INSERT INTO orders (id) VALUES (2)")
        .execute(&mut *tx)
        .await
        .unwrap();
    let kept = store
        .enqueue_in(
            &mut *tx,
            vec![
                NewEntry::new("orders", b"2".to_vec()),
                NewEntry::new("orders", b"3".to_vec()),
            ],
        )
        .await
        .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(count("SELECT count(*) FROM orders").await, 1);
    assert_eq!(count("SELECT count(*) FROM outbox").await, 2);
    for entry in &kept {
        assert_eq!(store.get(entry.id).await.unwrap().as_ref(), Some(entry));
    }
}

/// A table that was never migrated is refused when the store is built.
#[tokio::test]
async fn an_unmigrated_table_is_refused_at_construction() {
    let dir = tempfile::tempdir().unwrap();
    let pool = open_pool(&dir.path().join("empty.db"), 1).await;
    let err = outbox_sqlite::portable_store(pool, PortableConfig::default())
        .await
        .unwrap_err();
    assert!(
        matches!(err, OutboxError::SchemaNotMigrated { .. }),
        "{err}"
    );
}

/// An enqueue abandoned at its deadline (`Bounded`) while another connection holds the
/// file's write lock: the abandoned call's transaction never commits (its connection is
/// closed, which rolls it back, once the insert it was waiting in gets the lock), the
/// lock's holder commits, and the pool's one connection is usable again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_enqueue_abandoned_on_the_write_lock_writes_nothing() {
    use outbox_core::Bounded;
    use sqlx::{Connection, SqliteConnection};

    const DEADLINE: Duration = Duration::from_millis(300);
    let dir = tempfile::tempdir().unwrap();
    let store = Bounded::new(portable_store(dir.path(), "outbox", 1).await, DEADLINE).unwrap();
    let options = SqliteConnectOptions::new().filename(dir.path().join("outbox.db"));
    let mut holder = SqliteConnection::connect_with(&options).await.unwrap();
    sqlx::query("BEGIN IMMEDIATE")
        .execute(&mut holder)
        .await
        .unwrap();
    let doomed = NewEntry::new("t", b"doomed".to_vec());
    let doomed_id = doomed.id;
    outbox_testkit::faults::fails_within_the_deadline(
        "an enqueue waiting on the write lock",
        DEADLINE,
        store.enqueue_batch(vec![doomed]),
    )
    .await;
    sqlx::query("COMMIT").execute(&mut holder).await.unwrap();

    let started = std::time::Instant::now();
    let kept = loop {
        match store
            .enqueue_batch(vec![NewEntry::new("t", b"kept".to_vec())])
            .await
        {
            Ok(written) => break written,
            Err(e) => {
                assert!(started.elapsed() < Duration::from_secs(30), "not back: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    assert_eq!(
        store.get(kept[0].id).await.unwrap().as_ref(),
        Some(&kept[0])
    );
    // Read on a connection of its own, after the abandoned call's has gone.
    let (rows,): (i64,) = sqlx::query_as("SELECT count(*) FROM outbox")
        .fetch_one(&mut holder)
        .await
        .unwrap();
    assert_eq!(rows, 1, "the abandoned enqueue was committed");
    assert_eq!(store.get(doomed_id).await.unwrap(), None);
}
