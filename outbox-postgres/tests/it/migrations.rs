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
    assert_eq!(latest, 3);
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

/// A table at version 2 (the claim function without the planner settings of version 3)
/// upgrades in place: its rows stay, and a store built after the upgrade claims them,
/// renews and completes them through the new functions.
#[tokio::test]
async fn a_version_2_schema_upgrades_in_place() {
    use outbox_core::chrono::TimeDelta;
    use outbox_core::{
        ClaimRequest, ClaimStore, EmissionResult, NewEntry, OutboxStore, RenewRequest,
    };
    let Some(db) = PgTestDb::create().await else {
        return;
    };
    let mut client = db.connect().await;
    let table = TableName::in_schema(&db.schema, "outbox").unwrap();
    let script = outbox_postgres::migration_script(&table);
    let version_2 = &script[..script.find("\n-- migration 3:").expect("migration 3")];
    client
        .batch_execute(&format!("{version_2}\nCOMMIT;"))
        .await
        .unwrap();
    let err = outbox_postgres::check_schema(&client, &table)
        .await
        .unwrap_err();
    assert!(
        matches!(err, OutboxError::SchemaVersionMismatch { found: 2, .. }),
        "{err}"
    );
    // Rows written by the previous release, through the unchanged enqueue statement.
    let writer = outbox_postgres::PgWriter::new(&table);
    let entries = (0..5u8).map(|n| NewEntry::new("t", vec![n])).collect();
    writer.enqueue_in(&client, entries).await.unwrap();
    assert_eq!(
        outbox_postgres::migrate(&mut client, &table).await.unwrap(),
        3
    );
    let store = crate::support::store(&db, 2).await;
    let claims = store
        .claim_pending(&ClaimRequest::new("w", 10, TimeDelta::seconds(30)))
        .await
        .unwrap();
    assert_eq!(claims.len(), 5);
    let renewed = store
        .renew(&claims, &RenewRequest::new(TimeDelta::seconds(60)))
        .await
        .unwrap();
    assert!(
        renewed
            .iter()
            .all(|r| matches!(r, outbox_core::RenewOutcome::Renewed(_))),
        "{renewed:?}"
    );
    for claim in &claims {
        let done = store
            .mark_delivered(claim, EmissionResult::new())
            .await
            .unwrap();
        assert!(done.is_applied(), "{done:?}");
    }
    assert!(store
        .find_pending(&outbox_core::FindRequest::new(10))
        .await
        .unwrap()
        .is_empty());
}
