//! Building the store checks the schema; every call checks its input before it touches
//! the database.

use std::sync::Arc;

use chrono::TimeDelta;
use outbox_core::{
    ClaimRequest, ClaimStore, FindRequest, NewEntry, OutboxError, OutboxStore, PruneRequest,
    RenewRequest, TableName,
};
use outbox_postgres::{PgClaimStore, PgListener, PgStoreConfig};
use outbox_testkit::postgres::PgTestDb;

use crate::support;

#[tokio::test]
async fn an_unmigrated_or_mismatched_schema_is_refused_clearly() {
    let Some(db) = PgTestDb::create().await else {
        return;
    };
    let pool = support::pool(support::pg_config(&db.url, &db.schema), 1);
    let config = PgStoreConfig::new().table(support::table(&db));
    let err = PgClaimStore::new(pool.clone(), config.clone())
        .await
        .unwrap_err();
    assert!(
        matches!(err, OutboxError::SchemaNotMigrated { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("apply the migrations"), "{err}");

    let mut client = db.connect().await;
    outbox_postgres::migrate(&mut client, &support::table(&db))
        .await
        .unwrap();
    PgClaimStore::new(pool.clone(), config.clone())
        .await
        .unwrap();
    client
        .execute(
            &support::table(&db)
                .render("INSERT INTO {schema_prefix}\"{name}_migrations\" (version, name) VALUES (99, 'future')"),
            &[],
        )
        .await
        .unwrap();
    let err = PgClaimStore::new(pool, config).await.unwrap_err();
    assert!(
        matches!(
            err,
            OutboxError::SchemaPastWindow {
                store,
                found: 99,
                oldest_compatible: 99,
            } if store == outbox_postgres::required_version()
        ),
        "{err}"
    );
}

#[tokio::test]
async fn a_listener_for_another_table_is_refused() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let other = TableName::in_schema(&db.schema, "elsewhere").unwrap();
    let listener = PgListener::start(
        support::pg_config(&db.url, &db.schema),
        tokio_postgres::NoTls,
        &other,
    );
    let pool = support::pool(support::pg_config(&db.url, &db.schema), 1);
    let config = PgStoreConfig::new()
        .table(support::table(&db))
        .listener(Arc::new(listener));
    let err = PgClaimStore::new(pool, config).await.unwrap_err();
    assert!(err.is_invalid_input(), "{err}");
}

#[tokio::test]
async fn invalid_input_never_reaches_the_server() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let (proxy, store) = support::proxied_store(&db).await;
    let claim = {
        store
            .enqueue(NewEntry::new("t", b"x".to_vec()))
            .await
            .unwrap();
        store
            .claim_pending(&ClaimRequest::new("w", 1, TimeDelta::seconds(30)))
            .await
            .unwrap()
            .remove(0)
    };
    let before = proxy.traffic();
    let lease = TimeDelta::seconds(30);
    let refusals = [
        store
            .claim_pending(&ClaimRequest::new("w", 0, lease))
            .await
            .unwrap_err(),
        store
            .claim_retry_ready(&ClaimRequest::new(" ", 1, lease))
            .await
            .unwrap_err(),
        store
            .claim_pending(&ClaimRequest::new("w", 1, TimeDelta::zero()))
            .await
            .unwrap_err(),
        store
            .enqueue(NewEntry::new("", b"x".to_vec()))
            .await
            .unwrap_err(),
        store.enqueue_batch(vec![]).await.unwrap_err(),
        store.find_pending(&FindRequest::new(0)).await.unwrap_err(),
        store
            .find_retry_ready(&FindRequest::new(5000))
            .await
            .unwrap_err(),
        store
            .renew(
                std::slice::from_ref(&claim),
                &RenewRequest::new(TimeDelta::zero()),
            )
            .await
            .unwrap_err(),
        store.complete_batch(vec![]).await.unwrap_err(),
        store
            .prune_delivered(&PruneRequest {
                delivered_before: chrono::Utc::now(),
                batch_size: 0,
            })
            .await
            .unwrap_err(),
    ];
    for err in &refusals {
        assert!(err.is_invalid_input(), "{err}");
    }
    let client = db.connect().await;
    let tx_err = store
        .writer()
        .enqueue_in(&client, vec![NewEntry::new("t", vec![0; 2 * 1024 * 1024])])
        .await
        .unwrap_err();
    assert!(tx_err.is_invalid_input(), "{tx_err}");
    let traffic = proxy.traffic().since(&before);
    assert_eq!(
        (traffic.commands, traffic.round_trips, traffic.connections),
        (0, 0, 0),
        "a refused call reached the server"
    );
}
