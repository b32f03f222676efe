//! The store's own connection (claims, completions, renewals): it opens the file the
//! pool's connections have open, attached databases included, and refuses a database
//! that is not a file.

use std::time::Duration;

use outbox_core::{ClaimStore, Completion, CompletionRequest, EmissionResult, OutboxError};
use outbox_core::{OutboxStore, TableName};
use outbox_sqlite::{SqliteClaimStore, SqliteStoreConfig};
use outbox_testkit::fixtures::{claim_req, lease, new_entry, t0};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
use sqlx::Executor;

#[tokio::test]
async fn an_in_memory_database_is_refused_as_bad_input() {
    let config = SqliteStoreConfig::new();
    let pool = SqliteClaimStore::open_pool("sqlite::memory:", &config)
        .await
        .expect("an in-memory pool opens");
    outbox_sqlite::migrate(&pool, &TableName::default())
        .await
        .unwrap();
    let err = SqliteClaimStore::new(pool, config).await.unwrap_err();
    assert!(
        matches!(err, OutboxError::InvalidInput { .. }),
        "an in-memory database should be refused as bad input, got: {err:?}"
    );
    assert!(err.to_string().contains("in-memory"), "{err}");
}

#[tokio::test]
async fn a_table_in_an_attached_database_is_claimed_and_completed() {
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("main.db");
    let side = dir.path().join("side.db");
    let attach = format!("ATTACH DATABASE '{}' AS side", side.display());
    let options = SqliteConnectOptions::new()
        .filename(&main)
        .create_if_missing(true)
        .journal_mode(sqlx::sqlite::SqliteJournalMode::Wal);
    let pool = SqlitePoolOptions::new()
        .max_connections(2)
        .after_connect(move |conn, _| {
            let attach = attach.clone();
            Box::pin(async move { conn.execute(attach.as_str()).await.map(drop) })
        })
        .connect_with(options)
        .await
        .unwrap();
    let table = TableName::in_schema("side", "outbox").unwrap();
    outbox_sqlite::migrate(&pool, &table).await.unwrap();
    let config = SqliteStoreConfig::new().table(table);
    let store = SqliteClaimStore::new(pool.clone(), config).await.unwrap();

    store
        .enqueue_batch((0..5).map(|i| new_entry(i - 5)).collect())
        .await
        .unwrap();
    let claims = store
        .claim_pending(&claim_req("worker", 10, t0()))
        .await
        .unwrap();
    assert_eq!(claims.len(), 5, "the claim did not see the attached table");
    let renewed = store
        .renew(&claims, &outbox_core::RenewRequest::new(lease()).at(t0()))
        .await
        .unwrap();
    assert!(renewed.iter().all(|r| r.renewed().is_some()), "{renewed:?}");
    let done = store
        .complete_batch(
            claims
                .iter()
                .map(|c| {
                    CompletionRequest::new(c.clone(), Completion::Delivered(EmissionResult::new()))
                        .at(t0())
                })
                .collect(),
        )
        .await
        .unwrap();
    assert!(done.iter().all(|r| r.is_applied()), "{done:?}");
    let delivered: i64 =
        sqlx::query_scalar("SELECT count(*) FROM side.outbox WHERE delivered_at IS NOT NULL")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(
        delivered, 5,
        "the completions did not reach the attached file"
    );
    let in_main: i64 =
        sqlx::query_scalar("SELECT count(*) FROM main.sqlite_master WHERE name = 'outbox'")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(in_main, 0, "the store wrote a table into the main file");
}

#[tokio::test]
async fn the_store_connection_waits_for_the_busy_timeout_it_was_given() {
    let config = SqliteStoreConfig::new()
        .busy_timeout(Duration::from_millis(300))
        .max_connections(1);
    let (store, dir) = crate::support::fresh_store(config).await;
    store.enqueue_batch(vec![new_entry(-1)]).await.unwrap();
    let options = SqliteConnectOptions::new().filename(dir.path().join("outbox.db"));
    let mut other = <sqlx::SqliteConnection as sqlx::Connection>::connect_with(&options)
        .await
        .unwrap();
    let held = sqlx::Connection::begin_with(&mut other, "BEGIN IMMEDIATE")
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let err = store
        .claim_pending(&claim_req("worker", 1, t0()))
        .await
        .unwrap_err();
    let waited = started.elapsed();
    held.rollback().await.unwrap();
    assert!(matches!(err, OutboxError::Conflict { .. }), "{err:?}");
    assert!(
        waited >= Duration::from_millis(250) && waited < Duration::from_secs(3),
        "the claim waited {waited:?} for a busy timeout of 300 ms"
    );
}
