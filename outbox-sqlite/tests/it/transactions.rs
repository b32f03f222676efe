//! Enqueue inside the host's transaction: the outbox row shares the business row's fate.

use outbox_core::{FindRequest, NewEntry, OutboxError, OutboxStore};
use outbox_sqlite::SqliteStoreConfig;

use crate::support::fresh_store;

async fn orders_table(pool: &sqlx::SqlitePool) {
    sqlx::query("CREATE TABLE orders (id INTEGER PRIMARY KEY, total INTEGER NOT NULL)")
        .execute(pool)
        .await
        .unwrap();
}

async fn count(pool: &sqlx::SqlitePool, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(pool).await.unwrap()
}

#[tokio::test]
async fn rolled_back_host_transaction_leaves_no_outbox_row() {
    let (store, _dir) = fresh_store(SqliteStoreConfig::new()).await;
    orders_table(store.pool()).await;
    let mut tx = store.pool().begin().await.unwrap();
    sqlx::query("INSERT INTO orders (id, total) VALUES (1, 100)")
        .execute(&mut *tx)
        .await
        .unwrap();
    store
        .writer()
        .enqueue_in(
            &mut tx,
            vec![NewEntry::new("orders.created", b"1".to_vec())],
        )
        .await
        .unwrap();
    tx.rollback().await.unwrap();
    assert_eq!(count(store.pool(), "SELECT count(*) FROM orders").await, 0);
    assert_eq!(count(store.pool(), "SELECT count(*) FROM outbox").await, 0);
}

#[tokio::test]
async fn committed_host_transaction_leaves_exactly_its_rows() {
    let (store, _dir) = fresh_store(SqliteStoreConfig::new()).await;
    orders_table(store.pool()).await;
    let mut tx = store.pool().begin().await.unwrap();
    sqlx::query("INSERT INTO orders (id, total) VALUES (1, 100)")
        .execute(&mut *tx)
        .await
        .unwrap();
    let written = store
        .writer()
        .enqueue_in(
            &mut tx,
            vec![
                NewEntry::new("orders.created", b"1".to_vec()),
                NewEntry::new("orders.audit", b"1".to_vec()),
            ],
        )
        .await
        .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(count(store.pool(), "SELECT count(*) FROM orders").await, 1);
    let found = store.find_pending(&FindRequest::new(10)).await.unwrap();
    assert_eq!(found, written);
}

#[tokio::test]
async fn refused_batch_leaves_nothing_in_the_host_transaction() {
    let (store, _dir) = fresh_store(SqliteStoreConfig::new()).await;
    let existing = store
        .enqueue(NewEntry::new("t", b"x".to_vec()))
        .await
        .unwrap();
    let mut tx = store.pool().begin().await.unwrap();
    let fresh = NewEntry::new("t", b"y".to_vec());
    let fresh_id = fresh.id;
    let err = store
        .writer()
        .enqueue_in(
            &mut tx,
            vec![
                fresh,
                NewEntry::new("t", b"z".to_vec()).with_id(existing.id),
            ],
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err, OutboxError::DuplicateId(id) if id == existing.id),
        "{err}"
    );
    // The host may still commit its own work; the refused batch is not part of it.
    tx.commit().await.unwrap();
    assert!(store.get(fresh_id).await.unwrap().is_none());
}

/// A host transaction begun deferred that reads before it writes holds a read snapshot;
/// if another connection commits a write in between, SQLite refuses the upgrade to a
/// write (`SQLITE_BUSY_SNAPSHOT`) at once, busy timeout or not. Begun `IMMEDIATE`, as the
/// store's documentation shows, the transaction holds the write lock from its start and
/// the other writer waits for it instead.
#[tokio::test]
async fn a_host_transaction_that_reads_first_must_begin_immediate() {
    let (store, _dir) = fresh_store(SqliteStoreConfig::new()).await;
    orders_table(store.pool()).await;
    let entry = || vec![NewEntry::new("orders.created", b"1".to_vec())];

    // Deferred: read, another connection writes, then the enqueue fails.
    let mut tx = store.pool().begin().await.unwrap();
    let _: i64 = sqlx::query_scalar("SELECT count(*) FROM orders")
        .fetch_one(&mut *tx)
        .await
        .unwrap();
    store.enqueue_batch(entry()).await.unwrap();
    let err = store
        .writer()
        .enqueue_in(&mut tx, entry())
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("locked") || err.to_string().contains("busy"),
        "expected a busy snapshot, got: {err}"
    );
    tx.rollback().await.unwrap();

    // Immediate: the same sequence commits; the other writer waits its turn.
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await.unwrap();
    let _: i64 = sqlx::query_scalar("SELECT count(*) FROM orders")
        .fetch_one(&mut *tx)
        .await
        .unwrap();
    let other = {
        let store = store.clone();
        tokio::spawn(async move { store.enqueue_batch(entry()).await })
    };
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    store.writer().enqueue_in(&mut tx, entry()).await.unwrap();
    tx.commit().await.unwrap();
    other.await.unwrap().unwrap();
    assert_eq!(count(store.pool(), "SELECT count(*) FROM outbox").await, 3);
}

/// A service that only writes entries needs no store: a writer built from the table's name
/// writes on a connection the host opened itself, and refuses what the store refuses.
#[tokio::test]
async fn a_writer_without_a_store_writes_in_the_host_connection() {
    let (store, dir) = fresh_store(SqliteStoreConfig::new()).await;
    orders_table(store.pool()).await;
    let url = format!("sqlite://{}", dir.path().join("outbox.db").display());
    let mut conn = <sqlx::SqliteConnection as sqlx::Connection>::connect(&url)
        .await
        .unwrap();
    let writer = outbox_sqlite::SqliteWriter::new(&outbox_core::TableName::new("outbox").unwrap())
        .limits(
            outbox_core::StoreLimits::default()
                .with_max_payload_bytes(4)
                .unwrap(),
        );
    let mut tx = sqlx::Connection::begin(&mut conn).await.unwrap();
    sqlx::query("INSERT INTO orders (id, total) VALUES (7, 70)")
        .execute(&mut *tx)
        .await
        .unwrap();
    let written = writer
        .enqueue_in(
            &mut tx,
            vec![NewEntry::new("orders.created", b"7".to_vec())],
        )
        .await
        .unwrap();
    let err = writer
        .enqueue_in(
            &mut tx,
            vec![NewEntry::new("orders.created", b"too long".to_vec())],
        )
        .await
        .unwrap_err();
    assert!(matches!(err, OutboxError::InvalidInput { .. }), "{err}");
    let err = writer
        .enqueue_in(
            &mut tx,
            vec![NewEntry::new("t", b"x".to_vec()).with_id(written[0].id)],
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err, OutboxError::DuplicateId(id) if id == written[0].id),
        "{err}"
    );
    tx.commit().await.unwrap();
    assert_eq!(count(store.pool(), "SELECT count(*) FROM orders").await, 1);
    let found = store.find_pending(&FindRequest::new(10)).await.unwrap();
    assert_eq!(found, written);
}
