//! The file system under the database turns read-only mid-drain (ext4 remounting itself
//! read-only after a disk error): every write fails with an error that names the file, the
//! drain backs off instead of spinning and counts its failed cycles, and the file can
//! still be read, by the same store and by a read-only one.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use chrono::TimeDelta;
use outbox_core::drain::{DrainOptions, Emission, EmitOutcome, Emitter};
use outbox_core::{EmissionStatus, NewEntry, OutboxAdmin, OutboxStore};
use outbox_sqlite::{SqliteClaimStore, SqliteStoreConfig};
use tokio::sync::Notify;

use crate::ext4::Ext4;
use crate::support::{enqueue_orders, spawn_drain, store_at};

/// Delivers every entry; at the `fail_at`-th emission, once at least `recorded_first`
/// deliveries are recorded (for up to 10 s), it makes the file system fail.
struct FailsTheDiskMidDrain {
    fs: Arc<Ext4>,
    store: SqliteClaimStore,
    fail_at: usize,
    recorded_first: u64,
    seen: AtomicUsize,
    failed: Notify,
}

impl FailsTheDiskMidDrain {
    async fn delivered(&self) -> u64 {
        let stats = self.store.stats(&outbox_core::StatsRequest::new()).await;
        let stats = stats.expect("stats before the disk fails");
        stats
            .counts
            .get(&EmissionStatus::Delivered)
            .copied()
            .unwrap_or(0)
    }
}

#[outbox_core::async_trait]
impl Emitter for FailsTheDiskMidDrain {
    async fn emit(&self, _: Emission<'_>) -> EmitOutcome {
        if self.seen.fetch_add(1, Ordering::SeqCst) + 1 == self.fail_at {
            let waited = tokio::time::Instant::now();
            while self.delivered().await < self.recorded_first
                && waited.elapsed() < Duration::from_secs(10)
            {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            self.fs.fail();
            self.failed.notify_one();
        }
        EmitOutcome::delivered()
    }
}

/// Drain cycles that failed so far in this binary, whatever the step and kind.
fn failed_cycles() -> u64 {
    crate::metrics_seen::counters(outbox_core::metric_names::FAILED_CYCLES)
        .iter()
        .map(|(_, n)| n)
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_system_turned_read_only_fails_writes_naming_the_file_and_the_drain_backs_off() {
    turned_read_only_mid_drain(false).await;
}

/// The same with batches claimed ahead: the cycle whose last recording fails took in
/// batches from ahead and recorded some of them along the way, and the drain's summary
/// still counts every entry it delivered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drain_claiming_ahead_counts_what_it_recorded_before_the_disk_turned_read_only() {
    turned_read_only_mid_drain(true).await;
}

/// The two tests count failed cycles in this binary's metrics: they run one at a time.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn turned_read_only_mid_drain(claim_ahead: bool) {
    let _alone = ONE_AT_A_TIME.lock().await;
    let Some(fs) = Ext4::mount(16) else { return };
    crate::metrics_seen::start();
    let fs = Arc::new(fs);
    let db = fs.db();
    let store = store_at(&db, SqliteStoreConfig::new()).await;
    enqueue_orders(&store, 2_000).await;

    let emitter = Arc::new(FailsTheDiskMidDrain {
        fs: Arc::clone(&fs),
        store: store.clone(),
        fail_at: 300,
        recorded_first: 100,
        seen: AtomicUsize::new(0),
        failed: Notify::new(),
    });
    // Short leases, so the drain gives up recording the batch it emitted when the disk
    // failed within the test, and polls that back off from 10 ms to 200 ms. Claims ahead
    // are set either way: a drain alone on the file would claim ahead by itself.
    let options = DrainOptions::new()
        .owner("read-only")
        .batch_size(50)
        .claim_ahead(claim_ahead)
        .lease(TimeDelta::seconds(2))
        .poll_interval(Duration::from_millis(10), Duration::from_millis(200));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = spawn_drain(&store, emitter.clone(), options, async {
        let _ = stopped.await;
    });
    tokio::time::timeout(Duration::from_secs(20), emitter.failed.notified())
        .await
        .expect("the drain never reached the emission that fails the disk");

    // Writes are refused, naming the file.
    let refused = store
        .enqueue(NewEntry::new("orders", b"late".to_vec()))
        .await
        .expect_err("an enqueue on a read-only file system");
    let message = refused.to_string();
    assert!(
        message.contains(&db.display().to_string()) && message.contains("read-only"),
        "the error does not name the file and what to look at: {message}"
    );
    println!("an enqueue on the read-only file system: {message}");

    // Let the drain give up the batch it could not record (its leases end after 2 s),
    // then count its failed cycles over 3 s: backing off to one attempt every 200 ms is
    // about 15; a drain that spins would make thousands.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let before = failed_cycles();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let during = failed_cycles() - before;
    assert!(
        (1..=40).contains(&during),
        "{during} failed cycles in 3 s: the drain should keep trying, backing off"
    );
    let _ = stop.send(());
    let summary = tokio::time::timeout(Duration::from_secs(20), running)
        .await
        .expect("the drain did not stop")
        .unwrap();
    assert!(summary.errors > during, "{summary:?}");

    // What the drain recorded before the failure is still there to read.
    let read_only = SqliteClaimStore::open(
        db.to_str().expect("utf-8 path"),
        SqliteStoreConfig::new().read_only(true),
    )
    .await
    .expect("open the file read-only");
    let stats = read_only
        .stats(&outbox_core::StatsRequest::new())
        .await
        .expect("stats on the read-only file");
    let delivered = stats
        .counts
        .get(&EmissionStatus::Delivered)
        .copied()
        .unwrap_or(0);
    // One batch at a time, the five batches before the one that failed the disk were
    // recorded; claiming ahead, the emissions run ahead of their recordings, and the
    // emitter waited for 100 of them.
    let recorded_at_least = if claim_ahead { 100 } else { 250 };
    assert!(
        delivered >= recorded_at_least
            && delivered + stats.counts[&EmissionStatus::Pending] == 2_000,
        "{stats:?}"
    );
    assert_eq!(summary.delivered, delivered, "{summary:?}");
}
