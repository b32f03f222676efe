//! Migrations apply, repeat, revert, and are checked.

use outbox_core::{OutboxError, TableName};
use outbox_testkit::postgres::PgTestDb;

#[tokio::test]
async fn migrate_is_idempotent_checked_and_reversible() {
    let Some(db) = PgTestDb::create().await else {
        return;
    };
    let mut client = db.connect().await;
    let table = TableName::in_schema(&db.schema, "outbox").unwrap();
    let err = outbox_postgres::check_schema(&client, &table)
        .await
        .unwrap_err();
    assert!(
        matches!(err, OutboxError::SchemaNotMigrated { .. }),
        "{err}"
    );
    let latest = outbox_postgres::required_version();
    assert_eq!(latest, 2);
    assert_eq!(
        outbox_postgres::migrate(&mut client, &table).await.unwrap(),
        latest
    );
    assert_eq!(
        outbox_postgres::migrate(&mut client, &table).await.unwrap(),
        latest
    );
    outbox_postgres::check_schema(&client, &table)
        .await
        .unwrap();
    outbox_postgres::migrate_down(&mut client, &table)
        .await
        .unwrap();
    assert!(outbox_postgres::check_schema(&client, &table)
        .await
        .is_err());
}

#[tokio::test]
async fn printed_script_creates_the_same_schema() {
    let Some(db) = PgTestDb::create().await else {
        return;
    };
    let client = db.connect().await;
    let table = TableName::in_schema(&db.schema, "events_outbox").unwrap();
    client
        .batch_execute(&outbox_postgres::migration_script(&table))
        .await
        .unwrap();
    outbox_postgres::check_schema(&client, &table)
        .await
        .unwrap();
}
