//! Migrations apply, repeat, revert, and are checked.

use outbox_core::{OutboxError, TableName};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};

async fn pool(dir: &tempfile::TempDir) -> sqlx::SqlitePool {
    let opts = SqliteConnectOptions::new()
        .filename(dir.path().join("outbox.db"))
        .create_if_missing(true);
    SqlitePoolOptions::new()
        .max_connections(2)
        .connect_with(opts)
        .await
        .unwrap()
}

#[tokio::test]
async fn migrate_is_idempotent_checked_and_reversible() {
    let dir = tempfile::tempdir().unwrap();
    let pool = pool(&dir).await;
    let table = TableName::default();
    let err = outbox_sqlite::check_schema(&pool, &table)
        .await
        .unwrap_err();
    assert!(
        matches!(err, OutboxError::SchemaNotMigrated { .. }),
        "{err}"
    );
    assert_eq!(outbox_sqlite::migrate(&pool, &table).await.unwrap(), 1);
    assert_eq!(outbox_sqlite::migrate(&pool, &table).await.unwrap(), 1);
    outbox_sqlite::check_schema(&pool, &table).await.unwrap();
    outbox_sqlite::migrate_down(&pool, &table).await.unwrap();
    assert!(outbox_sqlite::check_schema(&pool, &table).await.is_err());
}

#[tokio::test]
async fn printed_script_creates_the_same_schema() {
    let dir = tempfile::tempdir().unwrap();
    let pool = pool(&dir).await;
    let table = TableName::new("events_outbox").unwrap();
    let script = outbox_sqlite::migration_script(&table);
    sqlx::raw_sql(&script).execute(&pool).await.unwrap();
    outbox_sqlite::check_schema(&pool, &table).await.unwrap();
}
