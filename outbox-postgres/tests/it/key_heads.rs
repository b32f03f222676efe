//! The head flag under concurrent writers: whatever commits when, an ordered claim takes
//! only a key's oldest entry not yet delivered, and a key never stalls with work but no
//! head, even when an older entry commits between a trigger's read of the head and its
//! update of the flags; and one transaction may write as many keys as it likes.

use std::time::Duration;

use outbox_core::chrono::{TimeDelta, Utc};
use outbox_core::{
    ClaimRequest, ClaimStore, Completion, CompletionRequest, EmissionResult, NewEntry, OutboxStore,
};

use crate::support;

fn ordered() -> ClaimRequest {
    ClaimRequest::new("w", 10, TimeDelta::seconds(30)).in_key_order()
}

fn keyed(topic: &str, seconds_ago: i64) -> NewEntry {
    NewEntry::new(topic, vec![])
        .partition_key("order-7")
        .created_at(Utc::now() - TimeDelta::seconds(seconds_ago))
}

async fn deliver(store: &outbox_postgres::PgClaimStore, claim: &outbox_core::Claim) {
    let done = store
        .complete_batch(vec![CompletionRequest::new(
            claim.clone(),
            Completion::Delivered(EmissionResult::new()),
        )])
        .await
        .unwrap();
    assert!(done[0].is_applied(), "{done:?}");
}

/// Two transactions write the first entries of an empty key and cannot see each other:
/// the ordered claim still takes the older one first, the other after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_writers_of_an_empty_key_still_drain_oldest_first() {
    let Some(db) = support::ordered_db().await else {
        return;
    };
    let store = support::store(&db, 2).await;
    let writer = outbox_postgres::PgWriter::new(&support::table(&db));
    let mut first = db.connect().await;
    let mut second = db.connect().await;
    let tx1 = first.transaction().await.unwrap();
    writer
        .enqueue_in(&tx1, vec![keyed("later", 10)])
        .await
        .unwrap();
    let tx2 = second.transaction().await.unwrap();
    writer
        .enqueue_in(&tx2, vec![keyed("earlier", 20)])
        .await
        .unwrap();
    tx1.commit().await.unwrap();
    tx2.commit().await.unwrap();

    let claims = store.claim_pending(&ordered()).await.unwrap();
    let topics: Vec<&str> = claims.iter().map(|c| c.entry.topic.as_str()).collect();
    assert_eq!(topics, vec!["earlier"]);
    deliver(&store, &claims[0]).await;
    let claims = store.claim_pending(&ordered()).await.unwrap();
    let topics: Vec<&str> = claims.iter().map(|c| c.entry.topic.as_str()).collect();
    assert_eq!(topics, vec!["later"]);
}

/// A writer adds an entry to a key whose head is out for delivery: the delivery waits for
/// the writer's commit, then passes the head on to the new entry, so the key does not
/// stall with work and no head.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_waits_for_a_writer_of_its_key_and_passes_the_head_on() {
    let Some(db) = support::ordered_db().await else {
        return;
    };
    let store = support::store(&db, 2).await;
    store.enqueue(keyed("head", 30)).await.unwrap();
    let head = store.claim_pending(&ordered()).await.unwrap();
    assert_eq!(head.len(), 1);

    let writer = outbox_postgres::PgWriter::new(&support::table(&db));
    let mut host = db.connect().await;
    let tx = host.transaction().await.unwrap();
    writer
        .enqueue_in(&tx, vec![keyed("next", 10)])
        .await
        .unwrap();
    let delivering = {
        let store = store.clone();
        let claim = head[0].clone();
        tokio::spawn(async move { deliver(&store, &claim).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !delivering.is_finished(),
        "the delivery did not wait for the writer of its key"
    );
    tx.commit().await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), delivering)
        .await
        .expect("the delivery never went on")
        .unwrap();

    let claims = store.claim_pending(&ordered()).await.unwrap();
    let topics: Vec<&str> = claims.iter().map(|c| c.entry.topic.as_str()).collect();
    assert_eq!(topics, vec!["next"], "the key stalled");
}

/// One transaction writes 20,000 keys (a per-key lock held to commit would exhaust the
/// server's lock table long before).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_transaction_writes_twenty_thousand_keys() {
    let Some(db) = support::ordered_db().await else {
        return;
    };
    let store = support::store(&db, 2).await;
    let writer = outbox_postgres::PgWriter::new(&support::table(&db));
    let mut host = db.connect().await;
    let tx = host.transaction().await.unwrap();
    for chunk in 0..20 {
        let entries = (0..1_000)
            .map(|i| NewEntry::new("bulk", vec![]).partition_key(format!("key-{chunk}-{i}")))
            .collect();
        writer.enqueue_in(&tx, entries).await.unwrap();
    }
    tx.commit().await.unwrap();
    let request = ClaimRequest::new("w", 1_000, TimeDelta::seconds(30)).in_key_order();
    let claims = store.claim_pending(&request).await.unwrap();
    assert_eq!(claims.len(), 1_000, "every key's only entry is its head");
}

/// A writer's trigger reads the key's head and then clears the other flags, with two
/// snapshots. Here the read waits on the first entry, which another transaction is
/// delivering while it also writes an older entry than the waiting writer's; that
/// transaction commits, the read skips the delivered entry and cannot see the older one,
/// and the update that follows sees the older one flagged. It keeps that flag (a trigger
/// that cleared every flag but its own head's left the key with no claimable head: the
/// claim below came back empty), so the older entry is claimed first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_older_entry_committed_between_a_triggers_read_and_update_keeps_its_flag() {
    let Some(db) = support::ordered_db().await else {
        return;
    };
    let store = support::store(&db, 2).await;
    let table = support::table(&db);
    let writer = outbox_postgres::PgWriter::new(&table);
    store.enqueue(keyed("first", 30)).await.unwrap();

    // Delivers "first" and writes "older", without committing.
    let mut holder = db.connect().await;
    let tx = holder.transaction().await.unwrap();
    tx.execute(
        &table.render("UPDATE {table} SET status = 1 WHERE topic = 'first'"),
        &[],
    )
    .await
    .unwrap();
    writer
        .enqueue_in(&tx, vec![keyed("older", 20)])
        .await
        .unwrap();

    // "newer"'s trigger reads the key from "first" on, and waits for its writer.
    let observer = db.connect().await;
    let newer = tokio::spawn({
        let writer = writer.clone();
        let mut client = support::tagged_client(&db).await;
        async move {
            let tx = client.transaction().await.unwrap();
            writer
                .enqueue_in(&tx, vec![keyed("newer", 10)])
                .await
                .unwrap();
            tx.commit().await.unwrap();
        }
    });
    support::blocked_backend(&observer, &db.schema, Duration::from_secs(10)).await;
    tx.commit().await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), newer)
        .await
        .expect("the newer entry's writer never went on")
        .unwrap();

    let claims = store.claim_pending(&ordered()).await.unwrap();
    let topics: Vec<&str> = claims.iter().map(|c| c.entry.topic.as_str()).collect();
    assert_eq!(
        topics,
        vec!["older"],
        "the key stalled or went out of order"
    );
    deliver(&store, &claims[0]).await;
    let claims = store.claim_pending(&ordered()).await.unwrap();
    let topics: Vec<&str> = claims.iter().map(|c| c.entry.topic.as_str()).collect();
    assert_eq!(topics, vec!["newer"]);
}

/// A batch that ends inside the runs takes whole runs in head order and cuts the last one
/// to its first rows: heads in claim order, each followed by its run, never every head
/// first (which would take the third key's head here, beside the first key's run).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_takes_runs_in_head_order_and_cuts_the_last() {
    let Some(db) = support::ordered_db().await else {
        return;
    };
    let store = support::store(&db, 2).await;
    let entries = (0..9i64)
        .map(|i| {
            let key = ["a", "b", "c"][(i % 3) as usize];
            NewEntry::new(format!("{key}{}", i / 3), vec![])
                .partition_key(key)
                .created_at(Utc::now() - TimeDelta::seconds(100 - i))
        })
        .collect();
    store.enqueue_batch(entries).await.unwrap();
    let request = |owner: &str, batch, run| {
        ClaimRequest::new(owner, batch, TimeDelta::seconds(30)).in_key_runs(run)
    };
    assert_eq!(
        support::claimed_topics(&store, &request("w", 5, 3)).await,
        vec!["a0", "a1", "a2", "b0", "b1"]
    );
    // The keys held are skipped whole; the third is free.
    assert_eq!(
        support::claimed_topics(&store, &request("w2", 3, 2)).await,
        vec!["c0", "c1"]
    );
}
