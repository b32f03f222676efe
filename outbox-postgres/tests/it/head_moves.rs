//! The head flag moves only when a key's head finishes (migration 11): a row behind the
//! head that finishes beside the head's own delivery, in either order, committed or
//! rolled back, still leaves the flag on the key's oldest unfinished row, and an ordered
//! claim takes that row; a row behind the head that becomes unfinished again after the
//! head moved past it takes the flag back.

use std::time::Duration;

use chrono::TimeDelta;
use outbox_core::{ClaimRequest, NewEntry, OutboxStore};
use outbox_postgres::PgClaimStore;
use outbox_testkit::postgres::PgTestDb;

use crate::support;

const WITHIN: Duration = Duration::from_secs(10);

/// A table prepared for per-key order holding one key's "first", "second" and "third",
/// oldest first.
async fn three_of_one_key() -> Option<(PgTestDb, PgClaimStore)> {
    let db = support::ordered_db().await?;
    let store = support::store(&db, 2).await;
    for (topic, seconds_ago) in [("first", 30), ("second", 20), ("third", 10)] {
        store
            .enqueue(
                NewEntry::new(topic, vec![])
                    .partition_key("order-7")
                    .created_at(chrono::Utc::now() - TimeDelta::seconds(seconds_ago)),
            )
            .await
            .unwrap();
    }
    Some((db, store))
}

/// Sets the status of the key's row `topic`, as any writer may (an operator's UPDATE).
fn set_status(db: &PgTestDb, topic: &str, status: i16) -> (String, String, i16) {
    (
        support::table(db).render("UPDATE {table} SET status = $2 WHERE topic = $1"),
        topic.to_owned(),
        status,
    )
}

/// The rows flagged as heads among the unfinished ones, and what an ordered claim takes.
async fn heads_and_claim(db: &PgTestDb, store: &PgClaimStore) -> (Vec<String>, Vec<String>) {
    let flagged = support::flagged_topics(db, true).await;
    let request = ClaimRequest::new("w", 10, TimeDelta::seconds(30)).in_key_order();
    (flagged, support::claimed_topics(store, &request).await)
}

/// `open` is delivered by a transaction left open while `then` is delivered by another,
/// which must wait on it; the first then commits (or rolls back when `commit` is false)
/// and the second goes on. Gives the flags and the ordered claim afterwards.
async fn deliver_beside(
    open: &str,
    then: &str,
    commit: bool,
) -> Option<(Vec<String>, Vec<String>)> {
    let (db, store) = three_of_one_key().await?;
    let observer = db.connect().await;
    let mut holder = db.connect().await;
    let tx = holder.transaction().await.unwrap();
    let (sql, topic, status) = set_status(&db, open, 1);
    tx.execute(&sql, &[&topic, &status]).await.unwrap();

    let waiting = tokio::spawn({
        let (sql, topic, status) = set_status(&db, then, 1);
        let client = support::tagged_client(&db).await;
        async move { client.execute(&sql, &[&topic, &status]).await }
    });
    support::blocked_backend(&observer, &db.schema, WITHIN).await;
    if commit {
        tx.commit().await.unwrap();
    } else {
        tx.rollback().await.unwrap();
    }
    tokio::time::timeout(WITHIN, waiting)
        .await
        .expect("the waiting delivery never went on")
        .unwrap()
        .unwrap();
    Some(heads_and_claim(&db, &store).await)
}

/// "second" is delivered by a transaction still open when "first", the head, is
/// delivered: the head's trigger waits for it, then passes the flag to "third" if it
/// committed, to "second" if it rolled back.
async fn behind_the_head_first(commit: bool) -> Option<(Vec<String>, Vec<String>)> {
    deliver_beside("second", "first", commit).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_behind_the_head_finished_first_and_committed_moves_the_head_past_it() {
    let Some((flagged, claimed)) = behind_the_head_first(true).await else {
        return;
    };
    assert_eq!(flagged, vec!["third"]);
    assert_eq!(claimed, vec!["third"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_behind_the_head_finished_first_and_rolled_back_takes_the_head() {
    let Some((flagged, claimed)) = behind_the_head_first(false).await else {
        return;
    };
    assert_eq!(flagged, vec!["second"]);
    assert_eq!(claimed, vec!["second"]);
}

/// "first", the head, is delivered by a transaction still open (its trigger flagged
/// "second") when "second" is delivered: that write waits, finds the flag, and passes it
/// on to "third".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_flagged_by_an_open_delivery_and_then_finished_passes_the_head_on() {
    let Some((flagged, claimed)) = deliver_beside("first", "second", true).await else {
        return;
    };
    assert_eq!(flagged, vec!["third"]);
    assert_eq!(claimed, vec!["third"]);
}

/// A row dead-lettered behind its key's head, then requeued once the head was delivered,
/// is the key's oldest unfinished row again and takes the flag back from the row the
/// delivery passed it to.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_requeued_row_older_than_the_head_takes_the_head_back() {
    let Some((db, store)) = three_of_one_key().await else {
        return;
    };
    let client = db.connect().await;
    for (topic, status) in [("second", 5), ("first", 1)] {
        let (sql, topic, status) = set_status(&db, topic, status);
        client.execute(&sql, &[&topic, &status]).await.unwrap();
    }
    let flagged = heads_and_claim(&db, &store).await.0;
    assert_eq!(flagged, vec!["third"]);

    // The claim above holds "third"; released, so the claim below judges the flag alone.
    client
        .execute(
            &support::table(&db).render(
                "UPDATE {table} SET claim_owner = NULL, claim_token = NULL, \
                 claimed_at = NULL, claim_expires_at = NULL",
            ),
            &[],
        )
        .await
        .unwrap();
    let (sql, topic, status) = set_status(&db, "second", 0);
    client.execute(&sql, &[&topic, &status]).await.unwrap();
    let (flagged, claimed) = heads_and_claim(&db, &store).await;
    assert_eq!(flagged, vec!["second"]);
    assert_eq!(claimed, vec!["second"]);
}
