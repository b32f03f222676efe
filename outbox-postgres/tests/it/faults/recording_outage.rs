//! An outage shorter than the leases, while emissions are being recorded (a server
//! restart, a failover, a dropped path): the drain keeps trying to record what it already
//! emitted while its leases last, so once the server is back nothing is emitted twice.

use std::time::Duration;

use chrono::TimeDelta;
use outbox_core::drain::DrainOptions;

use super::proxied::ProxiedDrain;

const ENTRIES: usize = 300;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outage_shorter_than_the_lease_emits_nothing_twice() {
    let options = DrainOptions::new()
        .owner("through-an-outage")
        .batch_size(50)
        .lease(TimeDelta::seconds(10))
        .poll_interval(Duration::from_millis(10), Duration::from_millis(200));
    let Some(mut run) = ProxiedDrain::start(ENTRIES, Default::default(), options).await else {
        return;
    };
    run.proxy
        .outage_once(|| run.emitted() >= 60, Duration::from_secs(2))
        .await;
    let during = run.emitted();
    run.wait_delivered(ENTRIES).await;
    let summary = run.stop().await;
    assert!(during < ENTRIES, "the drain finished before the outage");
    let twice: Vec<_> = run
        .emitter
        .emissions()
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .collect();
    assert!(
        twice.is_empty(),
        "{} entries emitted more than once after an outage shorter than the lease: {twice:?} ({summary:?})",
        twice.len()
    );
}
