//! A server that stops answering without closing anything (a network partition, a frozen
//! machine, a firewall that drops packets), played by a proxy that black-holes every
//! connection, open and new. Each store call fails within the store's call deadline
//! instead of waiting on a dead socket; a drain backs off through the outage, longer than
//! its leases, and once the path heals delivers every entry, none recorded twice.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::TimeDelta;
use outbox_core::drain::{Drain, DrainOptions};
use outbox_core::{
    ClaimRequest, ClaimStore, EmissionStatus, ListRequest, NewEntry, OutboxAdmin, OutboxError,
    OutboxStore,
};
use outbox_postgres::PgStoreConfig;
use outbox_testkit::emitters::PerEntry;
use outbox_testkit::tcp_proxy::TcpProxy;

use crate::support;

const DEADLINE: Duration = Duration::from_millis(500);
const ENTRIES: usize = 400;

/// Asserts that `call` failed as a broken connection, after about the deadline: not
/// refused at once, not left waiting.
async fn fails_within_the_deadline<T: std::fmt::Debug>(
    what: &str,
    call: impl std::future::Future<Output = outbox_core::Result<T>>,
) {
    let started = Instant::now();
    let result = call.await;
    let took = started.elapsed();
    match result {
        Err(OutboxError::Connection { message, .. }) => {
            assert!(message.contains("deadline"), "{what}: {message}")
        }
        other => panic!("{what} through the black hole gave {other:?}"),
    }
    assert!(
        took >= DEADLINE - Duration::from_millis(50) && took < DEADLINE * 4,
        "{what} failed after {took:?}, its deadline being {DEADLINE:?}"
    );
}

async fn wait_until(what: &str, within: Duration, mut done: impl AsyncFnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !done().await {
        assert!(Instant::now() < deadline, "{what}: not within {within:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_fail_within_their_deadline_and_the_drain_resumes_once_the_path_heals() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let direct = support::store(&db, 2).await;
    let entries = (0..ENTRIES)
        .map(|i| NewEntry::new("t", i.to_be_bytes().to_vec()))
        .collect();
    direct.enqueue_batch(entries).await.unwrap();

    let proxy = TcpProxy::start(support::server_addr(&db.url))
        .await
        .expect("start proxy");
    let config = support::pg_config_via(&db.url, &db.schema, proxy.local_addr());
    let deadline = PgStoreConfig::default().call_timeout(DEADLINE).unwrap();
    let store = Arc::new(support::store_with(&db, support::pool(config, 4), deadline).await);
    let emitter = Arc::new(PerEntry::default());
    let options = DrainOptions::new()
        .owner("black-holed")
        .batch_size(20)
        .lease(TimeDelta::seconds(2))
        .poll_interval(Duration::from_millis(10), Duration::from_millis(200));
    let drain = Drain::new(store.clone(), emitter.clone(), options).unwrap();
    let (stop, mut stopped) = tokio::sync::watch::channel(false);
    let running = tokio::spawn(async move {
        drain
            .run(async move {
                let _ = stopped.wait_for(|s| *s).await;
            })
            .await
    });

    wait_until(
        "some entries emitted",
        Duration::from_secs(30),
        async || emitter.emissions().len() >= 60,
    )
    .await;
    proxy.black_hole();
    let claim = ClaimRequest::new("bystander", 5, TimeDelta::seconds(30));
    fails_within_the_deadline("a claim", store.claim_next(&claim)).await;
    fails_within_the_deadline("the stats", store.stats(None)).await;
    let entry = vec![NewEntry::new("t", b"late".to_vec())];
    fails_within_the_deadline("an enqueue", store.enqueue_batch(entry)).await;
    // Longer than a lease: the batch in flight loses its leases meanwhile.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let during = emitter.emissions().len();
    proxy.restore();

    wait_until(
        "every entry delivered",
        Duration::from_secs(60),
        async || {
            let stats = direct.stats(None).await.unwrap();
            stats.count(EmissionStatus::Delivered) >= ENTRIES as u64
        },
    )
    .await;
    stop.send_replace(true);
    let summary = running.await.unwrap();
    assert!(
        summary.errors > 0,
        "the drain never saw the outage: {summary:?}"
    );
    assert!(during < ENTRIES, "the drain finished before the outage");

    let stats = direct.stats(None).await.unwrap();
    // The enqueue through the black hole may or may not have reached the server.
    assert!(
        stats.count(EmissionStatus::Delivered) <= ENTRIES as u64 + 1,
        "{stats:?}"
    );
    let mut request = ListRequest::new(EmissionStatus::Delivered, 1_000);
    request.topic = Some("t".into());
    let delivered = direct.list(&request).await.unwrap();
    assert!(delivered.len() >= ENTRIES, "{} delivered", delivered.len());
    let emitted = emitter.emissions();
    for entry in &delivered {
        assert_eq!(
            entry.attempt_count, 1,
            "entry {} has {} recorded outcomes",
            entry.id, entry.attempt_count
        );
        assert!(
            emitted.contains_key(&entry.id),
            "{} never emitted",
            entry.id
        );
    }
}
