//! Migrations: idempotent, checked by the store, and reversible.

use outbox_core::OutboxError;
use outbox_sqlserver::{
    check_schema, connect_pool, migrate, migrate_down, SqlServerClaimStore, SqlServerStoreConfig,
};

use crate::support::SqlServerTestDb;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrating_twice_changes_nothing_and_down_then_up_restores() {
    let Some(db) = SqlServerTestDb::create().await else {
        return;
    };
    let mut client = db.client().await;
    assert_eq!(
        migrate(&mut client, &db.table()).await.unwrap(),
        outbox_sqlserver::required_version()
    );
    check_schema(&mut client, &db.table()).await.unwrap();
    migrate_down(&mut client, &db.table()).await.unwrap();
    let err = check_schema(&mut client, &db.table()).await.unwrap_err();
    assert!(
        matches!(err, OutboxError::SchemaNotMigrated { .. }),
        "{err:?}"
    );
    let pool = connect_pool(db.options.clone(), 1).await.unwrap();
    let err = SqlServerClaimStore::new(pool, SqlServerStoreConfig::for_table(db.table()))
        .await
        .unwrap_err();
    assert!(
        matches!(err, OutboxError::SchemaNotMigrated { .. }),
        "{err:?}"
    );
    migrate(&mut client, &db.table()).await.unwrap();
    check_schema(&mut client, &db.table()).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_migration_script_applies_as_printed() {
    let Some(db) = SqlServerTestDb::create().await else {
        return;
    };
    let mut client = db.client().await;
    migrate_down(&mut client, &db.table()).await.unwrap();
    let script = outbox_sqlserver::migration_script(&db.table());
    crate::support::run(&mut client, &script).await;
    check_schema(&mut client, &db.table()).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_runs_read_committed_with_the_stores_settings() {
    let Some(db) = SqlServerTestDb::create().await else {
        return;
    };
    let mut client = outbox_sqlserver::connect(&db.options).await.unwrap();
    let row = client
        .simple_query("SELECT transaction_isolation_level, lock_timeout, CAST(SESSIONPROPERTY('ARITHABORT') AS int) AS arithabort, CAST(SESSIONPROPERTY('QUOTED_IDENTIFIER') AS int) AS qi FROM sys.dm_exec_sessions WHERE session_id = @@SPID")
        .await
        .unwrap()
        .into_row()
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.get::<i16, _>(0), Some(2), "READ COMMITTED");
    assert_eq!(
        row.get::<i32, _>(1),
        Some(10_000),
        "the default lock timeout"
    );
    assert_eq!(row.get::<i32, _>("arithabort"), Some(1));
    assert_eq!(row.get::<i32, _>("qi"), Some(1));
}
