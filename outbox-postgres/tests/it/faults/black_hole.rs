//! A server that stops answering without closing anything (a network partition, a frozen
//! machine, a firewall that drops packets), played by a proxy that black-holes every
//! connection, open and new. Each store call fails within the store's call deadline
//! instead of waiting on a dead socket; a drain backs off through the outage, longer than
//! its leases, and once the path heals delivers every entry, none recorded twice.

use std::time::Duration;

use chrono::TimeDelta;
use outbox_core::drain::DrainOptions;
use outbox_core::{
    ClaimRequest, ClaimStore, EmissionStatus, ListRequest, NewEntry, OutboxAdmin, OutboxStore,
};
use outbox_postgres::PgStoreConfig;
use outbox_testkit::faults::fails_within_the_deadline;

use super::proxied::ProxiedDrain;

const DEADLINE: Duration = Duration::from_millis(500);
const ENTRIES: usize = 400;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_fail_within_their_deadline_and_the_drain_resumes_once_the_path_heals() {
    let deadline = PgStoreConfig::default().call_timeout(DEADLINE).unwrap();
    let options = DrainOptions::new()
        .owner("black-holed")
        .batch_size(20)
        .lease(TimeDelta::seconds(2))
        .poll_interval(Duration::from_millis(10), Duration::from_millis(200));
    let Some(mut run) = ProxiedDrain::start(ENTRIES, deadline, options).await else {
        return;
    };
    run.wait_emitted(60).await;
    run.proxy.black_hole();
    let claim = ClaimRequest::new("bystander", 5, TimeDelta::seconds(30));
    fails_within_the_deadline("a claim", DEADLINE, run.store.claim_next(&claim)).await;
    fails_within_the_deadline(
        "the stats",
        DEADLINE,
        run.store.stats(&outbox_core::StatsRequest::new()),
    )
    .await;
    let entry = vec![NewEntry::new("t", b"late".to_vec())];
    fails_within_the_deadline("an enqueue", DEADLINE, run.store.enqueue_batch(entry)).await;
    // Longer than a lease: the batch in flight loses its leases meanwhile.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let during = run.emitted();
    run.proxy.restore();

    run.wait_delivered(ENTRIES).await;
    let summary = run.stop().await;
    assert!(
        summary.errors > 0,
        "the drain never saw the outage: {summary:?}"
    );
    assert!(during < ENTRIES, "the drain finished before the outage");

    let stats = run
        .direct
        .stats(&outbox_core::StatsRequest::new())
        .await
        .unwrap();
    // The enqueue through the black hole may or may not have reached the server.
    assert!(
        stats.count(EmissionStatus::Delivered) <= ENTRIES as u64 + 1,
        "{stats:?}"
    );
    let mut request = ListRequest::new(EmissionStatus::Delivered, 1_000);
    request.topic = Some("t".into());
    let delivered = run.direct.list(&request).await.unwrap();
    assert!(delivered.len() >= ENTRIES, "{} delivered", delivered.len());
    let emitted = run.emitter.emissions();
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
