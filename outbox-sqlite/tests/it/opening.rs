//! Clear errors for a database that cannot be opened or written, or is not migrated.

use outbox_core::{OutboxError, TableName};
use outbox_sqlite::{SqliteClaimStore, SqliteStoreConfig};

#[tokio::test]
async fn a_file_in_a_missing_directory_cannot_be_opened() {
    let err = SqliteClaimStore::open(
        "/nonexistent-dir/for/sure/outbox.db",
        SqliteStoreConfig::new(),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, OutboxError::Connection { .. }), "{err}");
    assert!(err.to_string().contains("cannot open"), "{err}");
}

#[tokio::test]
async fn an_unmigrated_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fresh.db");
    let err = SqliteClaimStore::open(path.to_str().unwrap(), SqliteStoreConfig::new())
        .await
        .unwrap_err();
    assert!(
        matches!(err, OutboxError::SchemaNotMigrated { .. }),
        "{err}"
    );
}

#[tokio::test]
async fn a_schema_of_another_version_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("future.db");
    let config = SqliteStoreConfig::new();
    let pool = SqliteClaimStore::open_pool(path.to_str().unwrap(), &config)
        .await
        .unwrap();
    outbox_sqlite::migrate(&pool, &TableName::default())
        .await
        .unwrap();
    sqlx::query("INSERT INTO outbox_migrations (version, name, applied_at) VALUES (99, 'from the future', 0)")
        .execute(&pool)
        .await
        .unwrap();
    let err = SqliteClaimStore::new(pool, config).await.unwrap_err();
    assert!(
        matches!(
            err,
            OutboxError::SchemaPastWindow {
                store,
                found: 99,
                oldest_compatible: 99,
            } if store == outbox_sqlite::required_version()
        ),
        "{err}"
    );
}

#[tokio::test]
async fn a_read_only_file_cannot_be_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ro.db");
    let url = format!("sqlite://{}?mode=ro", path.display());
    {
        let config = SqliteStoreConfig::new();
        let pool = SqliteClaimStore::open_pool(path.to_str().unwrap(), &config)
            .await
            .unwrap();
        outbox_sqlite::migrate(&pool, &TableName::default())
            .await
            .unwrap();
        pool.close().await;
    }
    let err = SqliteClaimStore::open(&url, SqliteStoreConfig::new())
        .await
        .unwrap_err();
    assert!(matches!(err, OutboxError::Connection { .. }), "{err}");
    assert!(err.to_string().contains("cannot"), "{err}");
}
