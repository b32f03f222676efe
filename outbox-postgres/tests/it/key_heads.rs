//! The head flag under concurrent writers of one key: a transaction that writes a key
//! waits for another one writing it to commit, then sees its row, so the key never ends
//! up with two heads or none, whichever commits first and whatever their creation times.

use std::time::Duration;

use outbox_core::chrono::{TimeDelta, Utc};
use outbox_core::{ClaimRequest, ClaimStore, NewEntry};

use crate::support;

/// The topics of the key's rows flagged as heads.
async fn heads(
    client: &tokio_postgres::Client,
    db: &outbox_testkit::postgres::PgTestDb,
) -> Vec<String> {
    let sql = support::table(db)
        .render("SELECT topic FROM {table} WHERE is_head AND status NOT IN (1, 5) ORDER BY topic");
    client
        .query(&sql, &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_transactions_writing_one_key_leave_exactly_one_head() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let store = support::store(&db, 2).await;
    let mut first = db.connect().await;
    let mut second = db.connect().await;
    let writer = outbox_postgres::PgWriter::new(&support::table(&db));

    // The first writes "later" and stays open; the second writes an entry created
    // earlier, which must become the head once both commit.
    let tx1 = first.transaction().await.unwrap();
    let later = NewEntry::new("later", vec![])
        .partition_key("order-7")
        .created_at(Utc::now() - TimeDelta::seconds(10));
    writer.enqueue_in(&tx1, vec![later]).await.unwrap();

    let second_writer = writer.clone();
    let blocked = tokio::spawn(async move {
        let tx2 = second.transaction().await.unwrap();
        let earlier = NewEntry::new("earlier", vec![])
            .partition_key("order-7")
            .created_at(Utc::now() - TimeDelta::seconds(20));
        second_writer.enqueue_in(&tx2, vec![earlier]).await.unwrap();
        tx2.commit().await.unwrap();
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !blocked.is_finished(),
        "the second writer of the key did not wait for the first"
    );
    tx1.commit().await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), blocked)
        .await
        .expect("the second writer never went on")
        .unwrap();

    let observer = db.connect().await;
    assert_eq!(heads(&observer, &db).await, vec!["earlier"]);
    let claims = store
        .claim_pending(&ClaimRequest::new("w", 10, TimeDelta::seconds(30)).in_key_order())
        .await
        .unwrap();
    let topics: Vec<&str> = claims.iter().map(|c| c.entry.topic.as_str()).collect();
    assert_eq!(topics, vec!["earlier"]);
}
