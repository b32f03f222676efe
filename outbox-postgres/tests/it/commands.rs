//! What each call costs on the wire, counted by a proxy between the store and the server
//! (not by the store): a claim batch of any size is one statement and one round trip, and
//! so are a batch completion, a renewal, a bulk enqueue and the operator's stats.

use std::time::{Duration, Instant};

use chrono::TimeDelta;
use outbox_core::{
    ClaimRequest, ClaimStore, Completion, CompletionRequest, EmissionResult, NewEntry, OutboxStore,
    RenewRequest,
};
use outbox_testkit::proxy::{PgProxy, PgTraffic, ProxyConfig};

use crate::support;

const BATCHES: [u32; 4] = [1, 10, 50, 100];

fn lease() -> TimeDelta {
    TimeDelta::minutes(5)
}

/// One call's traffic: exactly one command in exactly one round trip.
fn assert_one_statement(what: &str, traffic: PgTraffic) {
    eprintln!(
        "{what}: {} command(s), {} round trip(s)",
        traffic.commands, traffic.round_trips
    );
    assert_eq!(
        (traffic.commands, traffic.round_trips),
        (1, 1),
        "{what} was not one statement in one round trip"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_batch_call_is_one_statement_in_one_round_trip() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    // One connection, so every statement after its first use is already prepared on it.
    let (proxy, store) = support::proxied_store(&db).await;
    let total: u32 = BATCHES.iter().sum();

    // Below the copy threshold a batch is one statement.
    let small = u32::try_from(outbox_postgres::BULK_COPY_FROM).unwrap() - 1;
    let entries = |topic: &str, n: u32| -> Vec<NewEntry> {
        (0..n)
            .map(|i| NewEntry::new(topic, i.to_be_bytes().to_vec()))
            .collect()
    };
    let before = proxy.traffic();
    store.enqueue_batch(entries("t", small)).await.unwrap();
    let first_enqueue = proxy.traffic().since(&before);
    // The first use of a statement on a connection also prepares it: one more round trip
    // (parse and describe), but still one command.
    assert_eq!((first_enqueue.commands, first_enqueue.round_trips), (1, 2));
    let before = proxy.traffic();
    store
        .enqueue_batch(entries("t", total - small))
        .await
        .unwrap();
    assert_one_statement("enqueue (prepared)", proxy.traffic().since(&before));

    // From the threshold on, a batch is copied: a fixed handful of commands and round
    // trips, whatever its size.
    store.enqueue_batch(entries("bulk", 150)).await.unwrap();
    let mut copies = Vec::new();
    for n in [200, 1_000] {
        let before = proxy.traffic();
        store.enqueue_batch(entries("bulk", n)).await.unwrap();
        let t = proxy.traffic().since(&before);
        eprintln!(
            "bulk enqueue of {n}: {} commands, {} round trips",
            t.commands, t.round_trips
        );
        copies.push((t.commands, t.round_trips));
    }
    assert_eq!(copies[0], copies[1], "a copy's cost grew with its size");
    assert!(copies[0].0 <= 3 && copies[0].1 <= 4, "{copies:?}");

    // Prepare the claim statement with a claim that takes nothing.
    let nothing = ClaimRequest::new("w", 1, lease()).topic("no-such-topic");
    assert!(store.claim_pending(&nothing).await.unwrap().is_empty());
    let mut claims = Vec::new();
    for n in BATCHES {
        let before = proxy.traffic();
        let batch = store
            .claim_pending(&ClaimRequest::new("w", n, lease()).topic("t"))
            .await
            .unwrap();
        assert_one_statement(&format!("claim of {n}"), proxy.traffic().since(&before));
        assert_eq!(batch.len(), n as usize);
        claims.extend(batch);
    }

    let renewal = RenewRequest::new(lease());
    store.renew(&claims[..1], &renewal).await.unwrap();
    let before = proxy.traffic();
    let renewed = store.renew(&claims[1..], &renewal).await.unwrap();
    assert_one_statement("renewal of 160", proxy.traffic().since(&before));
    assert!(renewed.iter().all(|r| r.renewed().is_some()));

    let delivered = |c: &outbox_core::Claim| {
        CompletionRequest::new(c.clone(), Completion::Delivered(EmissionResult::new()))
    };
    let (first, rest) = claims.split_first().unwrap();
    // The renewal replaced nothing a completion checks (owner and token stay).
    store.complete(delivered(first)).await.unwrap();
    let before = proxy.traffic();
    let results = store
        .complete_batch(rest.iter().map(delivered).collect())
        .await
        .unwrap();
    assert_one_statement("completion of 160", proxy.traffic().since(&before));
    assert!(results.iter().all(|r| r.is_applied()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enqueue_in_a_host_transaction_is_one_round_trip() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let proxy = PgProxy::start(support::server_addr(&db.url), ProxyConfig::new())
        .await
        .expect("start proxy");
    let store = support::store(&db, 1).await;
    let config = support::pg_config_via(&db.url, &db.schema, proxy.local_addr());
    let (mut client, connection) = config.connect(tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    let tx = client.transaction().await.unwrap();
    let before = proxy.traffic();
    let entries = (0..50u8).map(|i| NewEntry::new("t", vec![i])).collect();
    store.writer().enqueue_in(&tx, entries).await.unwrap();
    assert_one_statement(
        "enqueue of 50 in a transaction",
        proxy.traffic().since(&before),
    );
    tx.commit().await.unwrap();
}

/// `outbox stats` reads the counts and what holds back the table's cleanup in one
/// statement; it used to take two.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stats_are_one_statement_in_one_round_trip() {
    use outbox_core::OutboxAdmin;

    let Some(db) = support::migrated_db().await else {
        return;
    };
    let (proxy, store) = support::proxied_store(&db).await;
    store
        .enqueue_batch(vec![NewEntry::new("t", b"x".to_vec())])
        .await
        .unwrap();
    // The first call also prepares the statement on the connection.
    store
        .stats(&outbox_core::StatsRequest::new())
        .await
        .unwrap();
    let before = proxy.traffic();
    let stats = store
        .stats(&outbox_core::StatsRequest::new())
        .await
        .unwrap();
    assert_one_statement("stats (prepared)", proxy.traffic().since(&before));
    assert_eq!(stats.counts[&outbox_core::EmissionStatus::Pending], 1);
    assert!(stats.cleanup.is_some(), "the cleanup figures are missing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxy_adds_its_latency_to_each_round_trip() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let latency = Duration::from_millis(20);
    let proxy = PgProxy::start(
        support::server_addr(&db.url),
        ProxyConfig::new().round_trip_latency(latency),
    )
    .await
    .expect("start proxy");
    let config = support::pg_config_via(&db.url, &db.schema, proxy.local_addr());
    let store = support::store_with(&db, support::pool(config, 1), Default::default()).await;
    let entries = (0..100u8).map(|i| NewEntry::new("t", vec![i])).collect();
    store.enqueue_batch(entries).await.unwrap();
    store
        .claim_pending(&ClaimRequest::new("w", 1, lease()))
        .await
        .unwrap();
    let started = Instant::now();
    let claims = store
        .claim_pending(&ClaimRequest::new("w", 99, lease()))
        .await
        .unwrap();
    let took = started.elapsed();
    eprintln!("claim of 99 through {latency:?} of round-trip latency took {took:?}");
    assert_eq!(claims.len(), 99);
    // The claim is one round trip (counted above); here the proxy must really delay it.
    assert!(took >= latency, "{took:?}");
}
