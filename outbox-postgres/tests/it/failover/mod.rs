//! Failovers mid-drain, against servers of the test's own: a primary that crashes while
//! its synchronous standby is promoted, a primary turned read-only in place while the
//! standby is promoted, and a server turned read-only and back; and a first host that
//! drops every connection attempt. The drain runs in this
//! process throughout, on a store given every host; nothing may be lost.

mod black_holed_host;
mod promoted_standby;
mod read_only;

use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use outbox_core::drain::DrainSummary;
use outbox_core::{EmissionStatus, NewEntry, OutboxAdmin, OutboxStore, TableName};
use outbox_postgres::{PgClaimStore, PgStoreConfig};
use outbox_testkit::emitters::PerEntry;
use tokio::task::JoinHandle;

/// Entries each failover test drains.
pub(crate) const ENTRIES: usize = 3_000;

/// The outbox table of the failover tests (each test has servers of its own).
pub(crate) fn table() -> TableName {
    TableName::new("outbox").expect("a valid table name")
}

/// A store on `url` (every host of it) over a pool of `size`, tagged `application_name`,
/// with the per-host connect timeout the store's own URL reading gives.
pub(crate) async fn store_on(url: &str, application_name: &str, size: usize) -> PgClaimStore {
    store_on_table(url, application_name, size, &table()).await
}

/// Like [`store_on`], on `table`.
pub(crate) async fn store_on_table(
    url: &str,
    application_name: &str,
    size: usize,
    table: &TableName,
) -> PgClaimStore {
    let mut settings = outbox_postgres::connect_settings(url).expect("a connection string");
    settings.config.application_name(application_name);
    let manager = Manager::from_config(
        settings.config,
        settings.tls.clone(),
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    let pool = Pool::builder(manager)
        .max_size(size)
        .build()
        .expect("a pool");
    PgClaimStore::new(
        pool,
        PgStoreConfig::new().table(table.clone()).tls(settings.tls),
    )
    .await
    .expect("build the store")
}

/// Migrates the outbox on `url` and enqueues [`ENTRIES`] entries.
pub(crate) async fn migrate_and_enqueue(url: &str) {
    let mut client = outbox_testkit::postgres::connect(url)
        .await
        .expect("connect");
    outbox_postgres::migrate(&mut client, &table())
        .await
        .expect("migrate");
    let store = store_on(url, "failover-setup", 2).await;
    for chunk in 0..ENTRIES / 500 {
        let batch = (0..500)
            .map(|i| NewEntry::new("t", format!("{}", chunk * 500 + i).into_bytes()))
            .collect();
        store.enqueue_batch(batch).await.expect("enqueue");
    }
}

/// Every entry was emitted, and the server now serving writes holds them all delivered.
pub(crate) async fn everything_delivered(store: &PgClaimStore, emitter: &PerEntry) -> usize {
    let emissions = emitter.emissions();
    assert_eq!(emissions.len(), ENTRIES, "an entry was never emitted");
    let stats = store
        .stats(&outbox_core::StatsRequest::new())
        .await
        .expect("stats after the failover");
    assert_eq!(
        stats.counts.get(&EmissionStatus::Delivered).copied(),
        Some(ENTRIES as u64),
        "not every entry is recorded as delivered: {stats:?}"
    );
    emissions.values().filter(|n| **n > 1).count()
}

/// Waits until `emitter` has emitted at least `n` entries.
pub(crate) async fn until_emitted(emitter: &PerEntry, n: usize) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while emitter.emissions().len() < n {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the drain did not get to {n} emissions"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// [`PerEntry`], whose emissions can be held: the drain stands still, mid-batch, while a
/// test puts its fault in place, so the rest of the drain surely meets it.
#[derive(Default)]
pub(crate) struct Held {
    pub(crate) inner: PerEntry,
    held: tokio::sync::watch::Sender<bool>,
}

#[outbox_core::async_trait]
impl outbox_core::drain::Emitter for Held {
    async fn emit(
        &self,
        emission: outbox_core::drain::Emission<'_>,
    ) -> outbox_core::drain::EmitOutcome {
        let mut held = self.held.subscribe();
        let _ = held.wait_for(|held| !held).await;
        self.inner.emit(emission).await
    }
}

/// A drain under way: its store, what it emitted so far, and its task.
pub(crate) struct Running {
    pub(crate) store: Arc<PgClaimStore>,
    pub(crate) emitter: Arc<Held>,
    pub(crate) drain: JoinHandle<DrainSummary>,
}

/// Migrates and fills the outbox on `setup_url`, starts a drain on a store on `url`
/// (tagged `application_name`), and returns once a third of the entries were emitted,
/// the next emissions held until [`Running::release`].
pub(crate) async fn drain_a_third(setup_url: &str, url: &str, application_name: &str) -> Running {
    migrate_and_enqueue(setup_url).await;
    let store = Arc::new(store_on(url, application_name, 4).await);
    let emitter = Arc::new(Held::default());
    let drain = tokio::spawn(outbox_testkit::emitters::drain_all(
        store.clone(),
        emitter.clone(),
        Duration::from_secs(120),
    ));
    until_emitted(&emitter.inner, ENTRIES / 3).await;
    emitter.held.send_replace(true);
    Running {
        store,
        emitter,
        drain,
    }
}

impl Running {
    /// Lets the held emissions go on.
    pub(crate) fn release(&self) {
        self.emitter.held.send_replace(false);
    }

    /// Entries emitted so far.
    pub(crate) fn emitted(&self) -> usize {
        self.emitter.inner.emissions().len()
    }

    /// Releases the emissions, waits for the drain to end, and checks that every entry
    /// was delivered, and that at least a third of them were emitted (so recorded) after
    /// the fault: what the server taking writes now holds proves the drain followed it.
    /// Says how many were emitted twice and how many cycles failed.
    pub(crate) async fn finish(self) -> (usize, u64) {
        let before = self.emitted();
        self.release();
        let summary = self.drain.await.expect("the drain");
        assert!(
            before <= ENTRIES * 2 / 3,
            "{before} of {ENTRIES} were emitted before the fault was in place"
        );
        let twice = everything_delivered(&self.store, &self.emitter.inner).await;
        (twice, summary.errors)
    }
}

/// A primary with a synchronous standby; `None` after a loud report without them.
pub(crate) async fn primary_and_standby(
) -> Option<Arc<outbox_testkit::pg_standby::PrimaryAndStandby>> {
    use outbox_testkit::pg_standby::{PrimaryAndStandby, ENGINE};
    match tokio::task::spawn_blocking(PrimaryAndStandby::start)
        .await
        .unwrap()
    {
        Ok(pair) => Some(Arc::new(pair)),
        Err(why) => {
            outbox_testkit::engines::unavailable(ENGINE, &why);
            None
        }
    }
}
