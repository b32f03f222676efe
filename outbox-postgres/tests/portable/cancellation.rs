//! The portable store abandoned mid-call by its deadline (`Bounded`), while one of its
//! row writes waits on a lock another transaction holds: the one pooled connection is
//! not handed to the next call mid-statement, the rows the abandoned claim did lease come
//! back after their lease, and an abandoned completion sent again is applied once.

use std::time::{Duration, Instant};

use chrono::TimeDelta;
use outbox_core::portable::{PortableConfig, PortablePgStore, PortableStore};
use outbox_core::{
    Bounded, ClaimRequest, ClaimStore, Completion, CompletionRequest, EmissionResult,
    EmissionStatus, EntryId, NewEntry, OutboxStore, TableName,
};
use outbox_testkit::faults::fails_within_the_deadline;
use outbox_testkit::postgres::PgTestDb;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

const DEADLINE: Duration = Duration::from_millis(500);
const WITHIN: Duration = Duration::from_secs(30);

/// A bounded portable store on a pool of one connection tagged with the test's schema,
/// holding four entries, and their ids in claim order.
async fn store_of_four(db: &PgTestDb) -> (Bounded<PortablePgStore>, TableName, Vec<EntryId>) {
    let table = TableName::in_schema(&db.schema, "outbox").unwrap();
    outbox_postgres::migrate(&mut db.connect().await, &table)
        .await
        .unwrap();
    let options: PgConnectOptions = db.url.parse().unwrap();
    let pool = PgPoolOptions::new()
        .max_connections(1)
        .connect_with(options.application_name(&db.schema))
        .await
        .unwrap();
    let portable = PortableStore::postgres(pool, PortableConfig::default().table(table.clone()))
        .await
        .unwrap();
    let store = Bounded::new(portable, DEADLINE).unwrap();
    let mut rows = Vec::new();
    for i in 0..4u8 {
        let written = store
            .enqueue_batch(vec![NewEntry::new("t", vec![i])])
            .await
            .unwrap();
        rows.push(store.get(written[0].id).await.unwrap().unwrap());
    }
    rows.sort_by_key(|r| (r.created_at, r.id));
    (store, table, rows.iter().map(|r| r.id).collect())
}

/// Another session's transaction holding `id`'s row lock.
async fn lock_row(db: &PgTestDb, table: &TableName, id: EntryId) -> tokio_postgres::Client {
    let locker = db.connect().await;
    locker.batch_execute("BEGIN").await.unwrap();
    let sql = format!(
        "SELECT 1 FROM {} WHERE id = $1 FOR UPDATE",
        table.qualified()
    );
    locker.execute(&sql, &[&id.as_uuid()]).await.unwrap();
    locker
}

/// Waits until no backend of the store runs a statement: the abandoned one has finished.
async fn until_idle(db: &PgTestDb) {
    let observer = db.connect().await;
    let started = Instant::now();
    loop {
        let active: i64 = observer
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 \
                 AND (state <> 'idle' OR xact_start IS NOT NULL)",
                &[&db.schema],
            )
            .await
            .unwrap()
            .get(0);
        if active == 0 {
            return;
        }
        assert!(
            started.elapsed() < WITHIN,
            "the abandoned statement runs on"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Calls `call` until it succeeds: the abandoned call's connection may need replacing.
async fn once_back<T, F, Fut>(what: &str, call: F) -> T
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = outbox_core::Result<T>>,
{
    let started = Instant::now();
    loop {
        match call().await {
            Ok(value) => return value,
            Err(e) => {
                assert!(started.elapsed() < WITHIN, "{what} never came back: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

fn request(owner: &str) -> ClaimRequest {
    ClaimRequest::new(owner, 10, TimeDelta::seconds(30))
}

/// The claim leases the first two rows, then waits on the third's lock until its
/// deadline abandons it. The next claim gets a working connection and exactly the rows
/// the abandoned one did not lease; those come back at the end of their lease, and all
/// four are delivered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_abandoned_at_its_deadline_leaves_its_rows_to_their_lease() {
    let Some(db) = PgTestDb::create().await else {
        return;
    };
    let (store, table, ids) = store_of_four(&db).await;
    let locker = lock_row(&db, &table, ids[2]).await;
    fails_within_the_deadline(
        "a claim waiting on a row lock",
        DEADLINE,
        store.claim_pending(&request("gone")),
    )
    .await;
    locker.batch_execute("ROLLBACK").await.unwrap();
    until_idle(&db).await;

    let next_request = request("next");
    let next = once_back("the next claim", || store.claim_pending(&next_request)).await;
    let mut gone = Vec::new();
    for id in &ids {
        let row = store.get(*id).await.unwrap().unwrap();
        match row.claim_owner.as_deref() {
            Some("gone") => gone.push(row),
            Some("next") => {
                let claim = next
                    .iter()
                    .find(|c| c.id() == *id)
                    .expect("claimed by next");
                assert_eq!(
                    row, *claim.entry,
                    "the durable lease is not the next claim's"
                );
            }
            other => panic!("row {id} leased by {other:?}"),
        }
    }
    assert_eq!(gone.len() + next.len(), ids.len(), "a row leased twice");
    let gone_ids: Vec<_> = gone.iter().map(|r| r.id).collect();
    assert!(
        gone_ids.contains(&ids[0]) && gone_ids.contains(&ids[1]),
        "the rows before the lock were not leased by the abandoned claim: {gone_ids:?}"
    );
    assert!(next.iter().any(|c| c.id() == ids[3]));

    let expiry = gone[0].claim_expires_at.unwrap();
    let again = store
        .claim_pending(&request("again").at(expiry))
        .await
        .unwrap();
    let mut again_ids: Vec<_> = again.iter().map(|c| c.id()).collect();
    again_ids.sort();
    let mut expected = gone_ids.clone();
    expected.sort();
    assert_eq!(
        again_ids, expected,
        "the abandoned leases did not come back"
    );
    assert!(again.iter().all(|c| c.acquisition == 2));
    let delivered = next
        .iter()
        .chain(&again)
        .map(|c| CompletionRequest::new(c.clone(), Completion::Delivered(EmissionResult::new())));
    let done = store.complete_batch(delivered.collect()).await.unwrap();
    assert!(done.iter().all(|r| r.is_applied()), "{done:?}");
    for id in &ids {
        let row = store.get(*id).await.unwrap().unwrap();
        assert_eq!(row.status, EmissionStatus::Delivered);
    }
}

/// The completion writes the first two rows, then waits on the third's lock until its
/// deadline abandons it. Sent again, the same requests are each applied: the two the
/// abandoned call wrote count as this request's, the others are written now, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_completion_abandoned_at_its_deadline_is_applied_once_when_sent_again() {
    let Some(db) = PgTestDb::create().await else {
        return;
    };
    let (store, table, ids) = store_of_four(&db).await;
    let claims = store.claim_pending(&request("w")).await.unwrap();
    assert_eq!(claims.len(), ids.len());
    let reqs: Vec<_> = claims
        .iter()
        .map(|c| CompletionRequest::new(c.clone(), Completion::Delivered(EmissionResult::new())))
        .collect();
    let locker = lock_row(&db, &table, ids[2]).await;
    fails_within_the_deadline(
        "a completion waiting on a row lock",
        DEADLINE,
        store.complete_batch(reqs.clone()),
    )
    .await;
    // Read beside the store: its one connection waits with the abandoned statement.
    let delivered = format!(
        "SELECT count(*) FROM {} WHERE status = 1",
        table.qualified()
    );
    let written_by_the_abandoned_call: i64 = db
        .connect()
        .await
        .query_one(&delivered, &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(
        written_by_the_abandoned_call, 2,
        "the abandoned completion should have written exactly the rows before the lock"
    );
    locker.batch_execute("ROLLBACK").await.unwrap();
    until_idle(&db).await;

    let done = once_back("the completion sent again", || {
        store.complete_batch(reqs.clone())
    })
    .await;
    assert!(done.iter().all(|r| r.is_applied()), "{done:?}");
    for result in &done {
        let row = store.get(result.entry.id).await.unwrap().unwrap();
        assert_eq!(row.status, EmissionStatus::Delivered);
        assert_eq!(row, result.entry, "the result is not the durable row");
    }
}
