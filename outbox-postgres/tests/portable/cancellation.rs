//! The portable store abandoned mid-call by its deadline (`Bounded`), while one of its
//! row writes waits on a lock another transaction holds: the one pooled connection is
//! not handed to the next call mid-statement, the rows the abandoned claim did lease come
//! back after their lease, and an abandoned completion sent again is applied once.

use std::time::{Duration, Instant};

use chrono::TimeDelta;
use outbox_core::portable::PortableConfig;
use outbox_core::{
    Bounded, ClaimRequest, ClaimStore, Completion, CompletionRequest, EmissionResult,
    EmissionStatus, EntryId, NewEntry, OutboxStore, TableName,
};
use outbox_postgres::PortablePgStore;
use outbox_testkit::faults::fails_within_the_deadline;
use outbox_testkit::postgres::PgTestDb;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

const DEADLINE: Duration = Duration::from_millis(500);
const WITHIN: Duration = Duration::from_secs(30);

/// A bounded portable store on a pool of one connection tagged with the test's schema,
/// holding four entries, and their ids in claim order.
async fn store_of_four(db: &PgTestDb) -> (Bounded<PortablePgStore>, TableName, Vec<EntryId>) {
    let table = super::migrated(db, "outbox").await;
    let options: PgConnectOptions = db.url.parse().unwrap();
    let pool = PgPoolOptions::new()
        .max_connections(1)
        .connect_with(options.application_name(&db.schema))
        .await
        .unwrap();
    let portable =
        outbox_postgres::portable_store(pool, PortableConfig::default().table(table.clone()))
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

/// A claim abandoned mid-statement in a black hole (its update waits on a lock, then the
/// path goes dark, so no answer will ever come) must not keep the pool's only
/// connection: once the path heals, the next call gets a connection within seconds, not
/// when the kernel gives up on the old socket many minutes later.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_abandoned_in_a_black_hole_gives_its_connection_back() {
    use outbox_testkit::tcp_proxy::TcpProxy;

    let Some(db) = PgTestDb::create().await else {
        return;
    };
    let table = super::migrated(&db, "outbox").await;
    let proxy = TcpProxy::start(outbox_testkit::postgres::server_addr(&db.url))
        .await
        .unwrap();
    let options = super::through(&db, &proxy).application_name(&db.schema);
    let pool = PgPoolOptions::new()
        .max_connections(1)
        .connect_with(options)
        .await
        .unwrap();
    let portable =
        outbox_postgres::portable_store(pool, PortableConfig::default().table(table.clone()))
            .await
            .unwrap();
    let store = Bounded::new(portable, Duration::from_secs(3)).unwrap();
    let written = store
        .enqueue_batch(vec![NewEntry::new("t", b"x".to_vec())])
        .await
        .unwrap();
    let locker = lock_row(&db, &table, written[0].id).await;
    let observer = db.connect().await;
    let gone = request("gone");
    tokio::select! {
        result = store.claim_pending(&gone) => {
            assert!(result.is_err(), "the claim ran past the lock: {result:?}");
        }
        () = async {
            loop {
                let waiting: i64 = observer
                    .query_one(
                        "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 \
                         AND wait_event_type = 'Lock'",
                        &[&db.schema],
                    )
                    .await
                    .unwrap()
                    .get(0);
                if waiting > 0 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            proxy.black_hole();
            // Past the deadline, still dark: the abandoned claim's answer is lost.
            tokio::time::sleep(Duration::from_secs(5)).await;
        } => panic!("the claim outlived its deadline"),
    }
    locker.batch_execute("ROLLBACK").await.unwrap();
    proxy.restore();
    let healed = Instant::now();
    let claim_request = request("next");
    let claims = once_back("a claim after the path healed", || {
        store.claim_pending(&claim_request)
    })
    .await;
    let took = healed.elapsed();
    assert!(
        took < Duration::from_secs(10),
        "the pool's connection came back only after {took:?}"
    );
    // The abandoned update went through once the lock was released, so the row is leased
    // to the claim nobody heard back from.
    assert!(claims.is_empty(), "{claims:?}");
}

/// The other side of closing abandoned connections: a call that runs to its end, with
/// rows or with an error from the database, hands its connection back. Every operation
/// runs on a pool of one connection, and none is opened after the first call's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finished_calls_keep_their_connection() {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;

    use outbox_core::{
        DeadLetterSelection, FindRequest, ListRequest, OutboxAdmin, OutboxError, PruneRequest,
        RenewRequest,
    };

    let Some(db) = PgTestDb::create().await else {
        return;
    };
    let table = super::migrated(&db, "outbox").await;
    let opened = Arc::new(AtomicU32::new(0));
    let counter = opened.clone();
    let options: PgConnectOptions = db.url.parse().unwrap();
    let pool = PgPoolOptions::new()
        .max_connections(1)
        .after_connect(move |_, _| {
            counter.fetch_add(1, Ordering::SeqCst);
            Box::pin(async { Ok(()) })
        })
        .connect_with(options)
        .await
        .unwrap();
    let store = outbox_postgres::portable_store(pool, PortableConfig::default().table(table))
        .await
        .unwrap();
    store.get(EntryId::new()).await.unwrap();
    let before = opened.load(Ordering::SeqCst);

    let first = NewEntry::new("t", b"1".to_vec());
    let again = first.clone();
    let written = store.enqueue_batch(vec![first]).await.unwrap();
    let duplicate = store.enqueue_batch(vec![again]).await.unwrap_err();
    assert!(
        matches!(duplicate, OutboxError::DuplicateId(_)),
        "{duplicate}"
    );
    store.get(written[0].id).await.unwrap().unwrap();
    store.find_pending(&FindRequest::new(10)).await.unwrap();
    store.find_retry_ready(&FindRequest::new(10)).await.unwrap();
    let claims = store.claim_pending(&request("w")).await.unwrap();
    store.claim_retry_ready(&request("w")).await.unwrap();
    store
        .renew(&claims, &RenewRequest::new(TimeDelta::seconds(30)))
        .await
        .unwrap();
    let current = store.get(written[0].id).await.unwrap().unwrap();
    store.save(&current, None).await.unwrap();
    // A day on, the lease has run out: claimed again, then given up on.
    let later = request("w").at(chrono::Utc::now() + TimeDelta::days(1));
    let fresh = store.claim_pending(&later).await.unwrap();
    assert_eq!(fresh.len(), 1);
    let done = fresh.into_iter().map(|c| {
        CompletionRequest::new(
            c,
            Completion::DeadLettered {
                error: outbox_core::EmissionError::new("by the test"),
                reason: None,
            },
        )
    });
    store.complete_batch(done.collect()).await.unwrap();
    store
        .stats(&outbox_core::StatsRequest::new())
        .await
        .unwrap();
    store
        .dead_letters(&outbox_core::DeadLettersRequest::new(10))
        .await
        .unwrap();
    store
        .list(&ListRequest::new(EmissionStatus::DeadLettered, 10))
        .await
        .unwrap();
    store
        .count_delivered_before(chrono::Utc::now())
        .await
        .unwrap();
    store
        .requeue(&outbox_core::RequeueRequest::dead_letters(
            DeadLetterSelection::All,
        ))
        .await
        .unwrap();
    store
        .prune_delivered(&PruneRequest {
            delivered_before: chrono::Utc::now(),
            batch_size: 10,
        })
        .await
        .unwrap();
    store
        .purge(&outbox_core::PurgeRequest::dead_letters(
            DeadLetterSelection::All,
        ))
        .await
        .unwrap();
    assert_eq!(
        opened.load(Ordering::SeqCst),
        before,
        "a finished call closed its connection"
    );
}
