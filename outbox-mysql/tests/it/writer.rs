//! Entries written in the host's own transaction, and pools the store refuses.

use outbox_core::{NewEntry, OutboxError, OutboxStore};
use outbox_mysql::{MySqlClaimStore, MySqlStoreConfig};
use sqlx::mysql::MySqlPoolOptions;

use crate::common::fresh_store;
use outbox_testkit::mysql::TestDatabase;

/// The outbox rows of a host transaction commit and roll back with the host's own rows,
/// and a refused batch leaves the host's transaction usable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enqueue_in_the_host_transaction_commits_or_rolls_back_with_it() {
    let Some((store, _db)) = fresh_store(MySqlStoreConfig::new()).await else {
        return;
    };
    let pool = store.pool().clone();
    sqlx::raw_sql("CREATE TABLE orders (id INT PRIMARY KEY) ENGINE = InnoDB")
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
        .writer()
        .enqueue_in(&mut tx, vec![NewEntry::new("orders", b"1".to_vec())])
        .await
        .unwrap();
    tx.rollback().await.unwrap();
    assert_eq!(store.get(doomed[0].id).await.unwrap(), None);
    assert_eq!(count("SELECT COUNT(*) FROM orders").await, 0);

    let mut tx = pool.begin().await.unwrap();
    sqlx::query("INSERT INTO orders (id) VALUES (2)")
        .execute(&mut *tx)
        .await
        .unwrap();
    let kept = store
        .writer()
        .enqueue_in(&mut tx, vec![NewEntry::new("orders", b"2".to_vec())])
        .await
        .unwrap();
    let mut twice = NewEntry::new("orders", b"again".to_vec());
    twice.id = kept[0].id;
    let err = store
        .writer()
        .enqueue_in(&mut tx, vec![NewEntry::new("orders", b"3".to_vec()), twice])
        .await
        .unwrap_err();
    assert!(
        matches!(err, OutboxError::DuplicateId(id) if id == kept[0].id),
        "{err}"
    );
    tx.commit().await.unwrap();
    assert_eq!(store.get(kept[0].id).await.unwrap(), Some(kept[0].clone()));
    assert_eq!(count("SELECT COUNT(*) FROM orders").await, 1);
    assert_eq!(count("SELECT COUNT(*) FROM outbox").await, 1);
}

/// A pool whose sessions run REPEATABLE READ (the server's default) is refused with a
/// message that says what to set, before anything is claimed.
#[tokio::test]
async fn a_pool_that_is_not_read_committed_is_refused() {
    let Some(db) = TestDatabase::create().await else {
        return;
    };
    let migrated = crate::common::pool(&db, 1).await;
    outbox_mysql::migrate(&migrated, &outbox_core::TableName::default())
        .await
        .unwrap();
    let plain = MySqlPoolOptions::new()
        .max_connections(1)
        .connect(&db.url)
        .await
        .unwrap();
    sqlx::query("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        .execute(&plain)
        .await
        .unwrap();
    let err = MySqlClaimStore::new(plain, MySqlStoreConfig::new())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("READ-COMMITTED"), "{err}");
}

/// Bad URLs are refused with the reason, and the password is never repeated.
#[tokio::test]
async fn unreachable_or_malformed_servers_are_reported_without_the_password() {
    let err = MySqlClaimStore::open("mysql://app:s3cret@127.0.0.1:1/x", MySqlStoreConfig::new())
        .await
        .unwrap_err();
    assert!(matches!(err, OutboxError::Connection { .. }), "{err}");
    assert!(!err.to_string().contains("s3cret"), "{err}");
    let err = MySqlClaimStore::open("sqlite://x.db", MySqlStoreConfig::new())
        .await
        .unwrap_err();
    assert!(matches!(err, OutboxError::InvalidInput { .. }), "{err}");
}
