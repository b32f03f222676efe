//! A drain whose store reaches the server through a proxy the test can cut or black-hole,
//! on a table loaded with entries, and a store that goes straight to the server to watch.

use std::sync::Arc;
use std::time::{Duration, Instant};

use outbox_core::drain::{Drain, DrainOptions, DrainSummary};
use outbox_core::{EmissionStatus, NewEntry, OutboxAdmin, OutboxStore};
use outbox_postgres::{PgClaimStore, PgStoreConfig};
use outbox_testkit::emitters::PerEntry;
use outbox_testkit::postgres::PgTestDb;
use outbox_testkit::tcp_proxy::TcpProxy;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::support;

/// The running drain and what a test needs around it.
pub(crate) struct ProxiedDrain {
    /// Straight to the server.
    pub(crate) direct: PgClaimStore,
    /// The drain's store, through the proxy.
    pub(crate) store: Arc<PgClaimStore>,
    pub(crate) proxy: TcpProxy,
    pub(crate) emitter: Arc<PerEntry>,
    stop: watch::Sender<bool>,
    running: JoinHandle<DrainSummary>,
    _db: PgTestDb,
}

impl ProxiedDrain {
    /// Loads `entries` entries (topic `t`) and starts a drain with `options` on a store
    /// built with `config`; `None` without a server.
    pub(crate) async fn start(
        entries: usize,
        config: PgStoreConfig,
        options: DrainOptions,
    ) -> Option<Self> {
        let db = support::migrated_db().await?;
        let direct = support::store(&db, 2).await;
        let rows = (0..entries)
            .map(|i| NewEntry::new("t", i.to_be_bytes().to_vec()))
            .collect();
        direct.enqueue_batch(rows).await.unwrap();
        let proxy = TcpProxy::start(support::server_addr(&db.url))
            .await
            .expect("start proxy");
        let via = support::pg_config_via(&db.url, &db.schema, proxy.local_addr());
        let store = Arc::new(support::store_with(&db, support::pool(via, 4), config).await);
        let emitter = Arc::new(PerEntry::default());
        let drain = Drain::new(store.clone(), emitter.clone(), options).unwrap();
        let (stop, mut stopped) = watch::channel(false);
        let running = tokio::spawn(async move {
            drain
                .run(async move {
                    let _ = stopped.wait_for(|s| *s).await;
                })
                .await
        });
        Some(Self {
            direct,
            store,
            proxy,
            emitter,
            stop,
            running,
            _db: db,
        })
    }

    /// Entries emitted so far (each counted once).
    pub(crate) fn emitted(&self) -> usize {
        self.emitter.emissions().len()
    }

    /// Waits until `n` entries were emitted, failing the test after 30 s.
    pub(crate) async fn wait_emitted(&self, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.emitted() < n {
            assert!(
                Instant::now() < deadline,
                "{} of {n} emitted",
                self.emitted()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits until `n` entries are delivered, failing the test after a minute.
    pub(crate) async fn wait_delivered(&self, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let stats = self
                .direct
                .stats(&outbox_core::StatsRequest::new())
                .await
                .unwrap();
            if stats.count(EmissionStatus::Delivered) >= n as u64 {
                return;
            }
            assert!(Instant::now() < deadline, "not all delivered: {stats:?}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Stops the drain; its summary.
    pub(crate) async fn stop(&mut self) -> DrainSummary {
        self.stop.send_replace(true);
        (&mut self.running).await.unwrap()
    }
}
