//! Migrations apply, repeat, revert, take turns, and are checked.

use outbox_core::{OutboxError, TableName};
use outbox_mysql::{MySqlClaimStore, MySqlStoreConfig};

use outbox_testkit::mysql::TestDatabase;

#[tokio::test]
async fn migrate_is_idempotent_checked_and_reversible() {
    let Some(db) = TestDatabase::create().await else {
        return;
    };
    let pool = crate::common::pool(&db, 2).await;
    let table = TableName::new("events").unwrap();
    let err = outbox_mysql::check_schema(&pool, &table).await.unwrap_err();
    assert!(
        matches!(err, OutboxError::SchemaNotMigrated { .. }),
        "{err}"
    );
    let config = MySqlStoreConfig::new().table(table.clone());
    let err = MySqlClaimStore::new(pool.clone(), config.clone())
        .await
        .unwrap_err();
    assert!(
        matches!(err, OutboxError::SchemaNotMigrated { .. }),
        "{err}"
    );

    let latest = outbox_mysql::required_version();
    assert_eq!(outbox_mysql::migrate(&pool, &table).await.unwrap(), latest);
    assert_eq!(outbox_mysql::migrate(&pool, &table).await.unwrap(), latest);
    outbox_mysql::check_schema(&pool, &table).await.unwrap();
    MySqlClaimStore::new(pool.clone(), config).await.unwrap();

    outbox_mysql::migrate_down(&pool, &table).await.unwrap();
    assert!(outbox_mysql::check_schema(&pool, &table).await.is_err());
    let left: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(left, 0, "migrate_down left tables behind");
}

/// Hosts that migrate at once take turns on the table's lock: every run succeeds and the
/// table is created once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_migrations_take_turns() {
    let Some(db) = TestDatabase::create().await else {
        return;
    };
    let pool = crate::common::pool(&db, 8).await;
    let table = TableName::default();
    let runs: Vec<_> = (0..6)
        .map(|_| {
            let (pool, table) = (pool.clone(), table.clone());
            tokio::spawn(async move { outbox_mysql::migrate(&pool, &table).await })
        })
        .collect();
    for run in runs {
        assert_eq!(
            run.await.unwrap().unwrap(),
            outbox_mysql::required_version()
        );
    }
    let recorded: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM outbox_migrations")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(recorded, 1);
}

/// A schema a newer release migrated is refused with both versions named, and left as it
/// is.
#[tokio::test]
async fn a_schema_newer_than_this_build_is_refused_and_left_as_it_is() {
    let Some(db) = TestDatabase::create().await else {
        return;
    };
    let pool = crate::common::pool(&db, 2).await;
    let table = TableName::default();
    let latest = outbox_mysql::migrate(&pool, &table).await.unwrap();
    sqlx::query("INSERT INTO outbox_migrations (version, name) VALUES (?, 'from_the_future')")
        .bind(latest + 1)
        .execute(&pool)
        .await
        .unwrap();
    for err in [
        outbox_mysql::migrate(&pool, &table).await.unwrap_err(),
        outbox_mysql::check_schema(&pool, &table).await.unwrap_err(),
    ] {
        assert!(
            matches!(err, OutboxError::SchemaPastWindow { store, found, .. }
                if store == latest && found == latest + 1),
            "{err}"
        );
    }
    let tables: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(tables, 2, "the outbox and its bookkeeping are still there");
}
