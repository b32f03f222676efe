//! Enqueue inside the host's own transaction: the outbox rows commit or roll back with
//! the business write.

use outbox_core::{EntryId, NewEntry, OutboxError, OutboxStore};

use crate::support;

async fn outbox_rows(
    client: &tokio_postgres::Client,
    db: &outbox_testkit::postgres::PgTestDb,
) -> i64 {
    let sql = support::table(db).render("SELECT count(*) FROM {table}");
    client.query_one(&sql, &[]).await.unwrap().get(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outbox_rows_commit_and_roll_back_with_the_business_rows() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let store = support::store(&db, 2).await;
    let mut client = db.connect().await;
    let orders = format!("\"{}\".orders", db.schema);
    client
        .batch_execute(&format!("CREATE TABLE {orders} (id bigint PRIMARY KEY)"))
        .await
        .unwrap();
    let insert_order = format!("INSERT INTO {orders} (id) VALUES ($1)");
    let count_orders = format!("SELECT count(*) FROM {orders}");

    // Rolled back: neither the order nor its outbox entries exist.
    let tx = client.transaction().await.unwrap();
    tx.execute(&insert_order, &[&1i64]).await.unwrap();
    let doomed = store
        .writer()
        .enqueue_in(
            &tx,
            vec![
                NewEntry::new("orders.created", b"1".to_vec()),
                NewEntry::new("orders.audit", b"1".to_vec()),
            ],
        )
        .await
        .unwrap();
    assert_eq!(doomed.len(), 2);
    tx.rollback().await.unwrap();
    for e in &doomed {
        assert!(
            store.get(e.id).await.unwrap().is_none(),
            "rolled-back entry exists"
        );
    }
    assert_eq!(outbox_rows(&client, &db).await, 0);

    // Committed: exactly the transaction's rows, invisible to others until the commit.
    let tx = client.transaction().await.unwrap();
    tx.execute(&insert_order, &[&2i64]).await.unwrap();
    let written = store
        .writer()
        .enqueue_in(
            &tx,
            (0..3u8)
                .map(|i| NewEntry::new("orders.created", vec![i]).header("order", "2"))
                .collect(),
        )
        .await
        .unwrap();
    let single = store
        .writer()
        .enqueue_one_in(&tx, NewEntry::new("orders.audit", b"2".to_vec()))
        .await
        .unwrap();
    assert!(
        store.get(single.id).await.unwrap().is_none(),
        "an uncommitted entry is visible outside its transaction"
    );
    tx.commit().await.unwrap();
    for e in written.iter().chain([&single]) {
        assert_eq!(store.get(e.id).await.unwrap().as_ref(), Some(e));
    }
    assert_eq!(outbox_rows(&client, &db).await, 4);
    let orders_now: i64 = client.query_one(&count_orders, &[]).await.unwrap().get(0);
    assert_eq!(orders_now, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_duplicate_id_fails_the_whole_bulk_enqueue() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let store = support::store(&db, 2).await;
    let existing = store
        .enqueue(NewEntry::new("t", b"x".to_vec()))
        .await
        .unwrap();
    let mut client = db.connect().await;
    let tx = client.transaction().await.unwrap();
    let fresh: Vec<NewEntry> = (0..10u8).map(|i| NewEntry::new("t", vec![i])).collect();
    let fresh_ids: Vec<EntryId> = fresh.iter().map(|e| e.id).collect();
    let mut batch = fresh;
    batch.push(NewEntry::new("t", b"dup".to_vec()).with_id(existing.id));
    let err = store.writer().enqueue_in(&tx, batch).await.unwrap_err();
    assert!(
        matches!(err, OutboxError::DuplicateId(id) if id == existing.id),
        "{err}"
    );
    tx.rollback().await.unwrap();
    for id in fresh_ids {
        assert!(
            store.get(id).await.unwrap().is_none(),
            "half a batch was written"
        );
    }
    assert_eq!(outbox_rows(&client, &db).await, 1);
}
