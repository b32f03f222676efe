//! One writer for every driver: entries written on a sqlx connection inside the host's
//! transaction, with the same single statement and wake-up as on tokio-postgres, and an
//! opt-in savepoint that keeps the host's transaction usable after a duplicate id.

use std::time::Duration;

use outbox_core::{NewEntry, OutboxError, OutboxStore, WakeSignal};
use outbox_postgres::{PgListener, PgWriter};
use sqlx::{Connection, PgConnection};

use crate::support;

async fn sqlx_connection(db: &outbox_testkit::postgres::PgTestDb) -> PgConnection {
    PgConnection::connect(&db.url).await.expect("sqlx connects")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sqlx_transaction_commits_or_rolls_back_its_entries_and_wakes_on_commit() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let store = support::store(&db, 2).await;
    let table = support::table(&db);
    let listener = PgListener::start(
        support::pg_config(&db.url, "listener"),
        tokio_postgres::NoTls,
        &table,
    );
    // No pool, no store: the writer is built from the table's name.
    let writer = PgWriter::new(&table);
    let mut conn = sqlx_connection(&db).await;

    let mut tx = conn.begin().await.unwrap();
    let doomed = writer
        .enqueue_in_sqlx(
            &mut tx,
            vec![NewEntry::new("orders.created", b"1".to_vec())],
        )
        .await
        .unwrap();
    tx.rollback().await.unwrap();
    assert!(
        store.get(doomed[0].id).await.unwrap().is_none(),
        "a rolled-back entry exists"
    );

    let mut tx = conn.begin().await.unwrap();
    let written = writer
        .enqueue_in_sqlx(
            &mut tx,
            (0..3u8)
                .map(|i| NewEntry::new("orders.created", vec![i]).header("order", "2"))
                .collect(),
        )
        .await
        .unwrap();
    assert!(
        store.get(written[0].id).await.unwrap().is_none(),
        "visible before the commit"
    );
    // Wait until the listener is listening, so its wake-up can only come from this commit.
    listener.wait(Duration::from_millis(200)).await;
    tx.commit().await.unwrap();
    assert!(
        listener.wait(Duration::from_secs(5)).await,
        "the commit raised no wake-up"
    );
    for e in &written {
        assert_eq!(
            store.get(e.id).await.unwrap().as_ref(),
            Some(e),
            "what came back is what is stored"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_duplicate_id_is_named_and_a_savepoint_keeps_the_transaction_usable() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let store = support::store(&db, 2).await;
    let table = support::table(&db);
    let existing = store
        .enqueue(NewEntry::new("t", b"x".to_vec()))
        .await
        .unwrap();
    let duplicate = || NewEntry::new("t", b"y".to_vec()).with_id(existing.id);
    let mut conn = sqlx_connection(&db).await;

    // Without a savepoint, PostgreSQL aborts the host's transaction.
    let plain = PgWriter::new(&table);
    let mut tx = conn.begin().await.unwrap();
    let err = plain
        .enqueue_in_sqlx(&mut tx, vec![duplicate()])
        .await
        .unwrap_err();
    assert!(
        matches!(err, OutboxError::DuplicateId(id) if id == existing.id),
        "{err:?}"
    );
    let after = sqlx::query("SELECT 1").execute(&mut *tx).await;
    assert!(after.is_err(), "the transaction was not aborted");
    tx.rollback().await.unwrap();

    // With one, the transaction goes on and commits its other writes.
    let guarded = PgWriter::new(&table).savepoint(true);
    let mut tx = conn.begin().await.unwrap();
    let err = guarded
        .enqueue_in_sqlx(&mut tx, vec![duplicate()])
        .await
        .unwrap_err();
    assert!(matches!(err, OutboxError::DuplicateId(_)), "{err:?}");
    let kept = guarded
        .enqueue_in_sqlx(&mut tx, vec![NewEntry::new("t", b"z".to_vec())])
        .await
        .expect("the transaction is still usable");
    tx.commit().await.unwrap();
    assert!(store.get(kept[0].id).await.unwrap().is_some());

    // The same on tokio-postgres.
    let mut client = db.connect().await;
    let tx = client.transaction().await.unwrap();
    let err = guarded
        .enqueue_in(&tx, vec![duplicate()])
        .await
        .unwrap_err();
    assert!(matches!(err, OutboxError::DuplicateId(_)), "{err:?}");
    let kept = guarded
        .enqueue_one_in(&tx, NewEntry::new("t", b"w".to_vec()))
        .await
        .expect("the transaction is still usable");
    tx.commit().await.unwrap();
    assert!(store.get(kept.id).await.unwrap().is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_observed_store_reaches_its_writer_without_unwrapping() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let store = outbox_core::Observed::new(support::store(&db, 2).await);
    let client = db.connect().await;
    let written = store
        .writer()
        .enqueue_one_in(&client, NewEntry::new("t", b"1".to_vec()))
        .await
        .unwrap();
    let mut conn = sqlx_connection(&db).await;
    let more = store
        .writer()
        .enqueue_in_sqlx(&mut conn, vec![NewEntry::new("t", b"2".to_vec())])
        .await
        .unwrap();
    assert!(store.get(written.id).await.unwrap().is_some());
    assert!(store.get(more[0].id).await.unwrap().is_some());
}
