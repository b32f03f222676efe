//! A claim or completion future dropped mid-statement leaves no transaction, no lock and
//! no busy connection behind; the next call works; rows a lost call did claim come back
//! after their lease.

use std::sync::Arc;
use std::time::Duration;

use chrono::TimeDelta;
use outbox_core::{
    ClaimRequest, ClaimStore, Completion, CompletionRequest, EmissionResult, EmissionStatus,
    NewEntry, OutboxStore,
};
use outbox_testkit::proxy::{PgProxy, ProxyConfig};

use crate::support;

const WITHIN: Duration = Duration::from_secs(10);

fn request() -> ClaimRequest {
    ClaimRequest::new("w", 10, TimeDelta::seconds(30))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_dropped_while_it_waits_leaves_nothing_behind() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let store = support::store(&db, 1).await;
    let written = store
        .enqueue_batch((0..5u8).map(|i| NewEntry::new("t", vec![i])).collect())
        .await
        .unwrap();
    let observer = db.connect().await;
    let mut locker = db.connect().await;
    let tx = locker.transaction().await.unwrap();
    tx.batch_execute(&support::table(&db).render("LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE"))
        .await
        .unwrap();
    // The claim waits on the lock; the moment it is seen waiting, its future is dropped.
    let req = request();
    tokio::select! {
        result = store.claim_pending(&req) => panic!("the claim ran past the lock: {result:?}"),
        _pid = support::blocked_backend(&observer, &db.schema, WITHIN) => {}
    }
    // While the lock is still held, the abandoned statement is gone: cancelled, its
    // connection closed rather than returned to the pool.
    support::until_quiet(&observer, &db.schema, WITHIN).await;
    assert_eq!(
        store.pool().status().size,
        0,
        "the busy connection went back to the pool"
    );
    tx.rollback().await.unwrap();
    let claims = store.claim_pending(&request()).await.unwrap();
    assert_eq!(claims.len(), written.len());
    assert!(
        claims.iter().all(|c| c.acquisition == 1),
        "the dropped claim was applied"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_completion_dropped_while_it_waits_leaves_nothing_behind() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let store = support::store(&db, 1).await;
    store
        .enqueue_batch((0..3u8).map(|i| NewEntry::new("t", vec![i])).collect())
        .await
        .unwrap();
    let claims = store.claim_pending(&request()).await.unwrap();
    let observer = db.connect().await;
    let mut locker = db.connect().await;
    let tx = locker.transaction().await.unwrap();
    let last = claims.iter().map(|c| c.id()).max().unwrap();
    tx.execute(
        &support::table(&db).render("SELECT 1 FROM {table} WHERE id = $1 FOR UPDATE"),
        &[&last.as_uuid()],
    )
    .await
    .unwrap();
    let reqs: Vec<_> = claims
        .iter()
        .map(|c| CompletionRequest::new(c.clone(), Completion::Delivered(EmissionResult::new())))
        .collect();
    // Dropped mid-statement, once the batch holds two row locks and waits for the third.
    let pid = tokio::select! {
        result = store.complete_batch(reqs.clone()) => panic!("the completion ran past the lock: {result:?}"),
        pid = support::blocked_backend(&observer, &db.schema, WITHIN) => pid,
    };
    support::until_quiet(&observer, &db.schema, WITHIN).await;
    let held: i64 = observer
        .query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE pid = $1",
            &[&pid],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(held, 0, "the abandoned backend is still connected");
    tx.rollback().await.unwrap();
    for c in &claims {
        assert_eq!(
            store.get(c.id()).await.unwrap().unwrap(),
            *c.entry,
            "half a completion"
        );
    }
    let done = store.complete_batch(reqs).await.unwrap();
    assert!(done.iter().all(|r| r.is_applied()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_a_dropped_claim_did_take_come_back_after_the_lease() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    // The answer takes half a second to come back: the claim commits on the server long
    // before its caller could read it.
    let proxy = PgProxy::start(
        support::server_addr(&db.url),
        ProxyConfig::new().one_way_delay(Duration::from_millis(500)),
    )
    .await
    .unwrap();
    let config = support::pg_config_via(&db.url, &db.schema, proxy.local_addr());
    let store =
        Arc::new(support::store_with(&db, support::pool(config, 1), Default::default()).await);
    let direct = support::store(&db, 1).await;
    let written = direct
        .enqueue_batch((0..4u8).map(|i| NewEntry::new("t", vec![i])).collect())
        .await
        .unwrap();
    let observer = db.connect().await;
    let claimed =
        support::table(&db).render("SELECT count(*) FROM {table} WHERE claim_owner IS NOT NULL");
    let req = request();
    tokio::select! {
        result = store.claim_pending(&req) => panic!("the answer arrived early: {result:?}"),
        () = async {
            loop {
                let n: i64 = observer.query_one(&claimed, &[]).await.unwrap().get(0);
                if n > 0 { break; }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        } => {}
    }
    // Nobody got those claims; they are still leased, so nobody may take them now …
    assert!(direct.claim_pending(&request()).await.unwrap().is_empty());
    // … and once the lease has run out (time injected) they are claimable again.
    let expiry = direct
        .get(written[0].id)
        .await
        .unwrap()
        .unwrap()
        .claim_expires_at
        .unwrap();
    let again = direct.claim_pending(&request().at(expiry)).await.unwrap();
    assert_eq!(again.len(), written.len());
    assert!(again.iter().all(|c| c.acquisition == 2));
    for c in &again {
        let done = direct
            .mark_delivered(c, EmissionResult::new())
            .await
            .unwrap();
        assert_eq!(done.entry.status, EmissionStatus::Delivered);
    }
    // The store behind the proxy works again on a fresh connection.
    assert!(store.claim_pending(&request()).await.unwrap().is_empty());
}
