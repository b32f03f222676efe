//! An outage shorter than the leases, while emissions are being recorded (a server
//! restart, a failover, a dropped path): the drain keeps trying to record what it already
//! emitted while its leases last, so once the server is back nothing is emitted twice.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::TimeDelta;
use outbox_core::drain::{Drain, DrainOptions};
use outbox_core::{EmissionStatus, NewEntry, OutboxAdmin, OutboxStore};
use outbox_testkit::emitters::PerEntry;
use outbox_testkit::tcp_proxy::TcpProxy;

use crate::support;

const ENTRIES: usize = 300;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outage_shorter_than_the_lease_emits_nothing_twice() {
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
    let store =
        Arc::new(support::store_with(&db, support::pool(config, 4), Default::default()).await);
    let emitter = Arc::new(PerEntry::default());
    let options = DrainOptions::new()
        .owner("through-an-outage")
        .batch_size(50)
        .lease(TimeDelta::seconds(10))
        .poll_interval(Duration::from_millis(10), Duration::from_millis(200));
    let drain = Drain::new(store, emitter.clone(), options).unwrap();
    let (stop, mut stopped) = tokio::sync::watch::channel(false);
    let running = tokio::spawn(async move {
        drain
            .run(async move {
                let _ = stopped.wait_for(|s| *s).await;
            })
            .await
    });

    let emitted = || emitter.emissions().len();
    proxy
        .outage_once(|| emitted() >= 60, Duration::from_secs(2))
        .await;
    let during = emitted();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let stats = direct.stats(None).await.unwrap();
        if stats.count(EmissionStatus::Delivered) >= ENTRIES as u64 {
            break;
        }
        assert!(Instant::now() < deadline, "not all delivered: {stats:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    stop.send_replace(true);
    let summary = running.await.unwrap();
    assert!(during < ENTRIES, "the drain finished before the outage");
    let twice: Vec<_> = emitter
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
