//! A drain that meets a full disk mid-drain (issue #30): its claims and completions fail
//! while the disk is full, and once the filesystem grows the same drain, in the same
//! process, delivers every entry, each exactly once.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::TimeDelta;
use outbox_core::drain::{DrainOptions, Emission, EmitOutcome, Emitter};
use outbox_core::{EmissionStatus, EntryId, NewEntry, OutboxAdmin, OutboxStore};
use outbox_sqlite::SqliteStoreConfig;
use tokio::sync::Notify;

use crate::support::{enqueue_orders, spawn_drain};
use crate::tmpfs::{truncate_wal, Tmpfs};

/// Delivers every entry and counts each entry's emissions; at the `fill_at`-th emission
/// it fills the disk, so the completion of the batch in flight and the claims after it
/// meet `SQLITE_FULL`.
struct FillsTheDiskMidDrain {
    fs: Arc<Tmpfs>,
    fill_at: usize,
    filled: AtomicBool,
    disk_full: Notify,
    emissions: Mutex<HashMap<EntryId, u32>>,
}

#[outbox_core::async_trait]
impl Emitter for FillsTheDiskMidDrain {
    async fn emit(&self, emission: Emission<'_>) -> EmitOutcome {
        let seen = {
            let mut counts = self.emissions.lock().expect("the counts' lock");
            *counts.entry(emission.entry.id).or_default() += 1;
            counts.values().map(|&n| n as usize).sum::<usize>()
        };
        if seen >= self.fill_at && !self.filled.swap(true, Ordering::SeqCst) {
            self.fs.fill();
            self.disk_full.notify_one();
        }
        EmitOutcome::delivered()
    }
}

/// Entries to drain: a few batches before the disk fills, many after.
const ENTRIES: usize = 2_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drain_that_met_a_full_disk_delivers_everything_once_the_filesystem_grows() {
    let Some(fs) = Tmpfs::mount("3m") else { return };
    let fs = Arc::new(fs);
    let store = fs.store(SqliteStoreConfig::new()).await;
    enqueue_orders(&store, ENTRIES).await;
    truncate_wal(store.pool()).await;

    let emitter = Arc::new(FillsTheDiskMidDrain {
        fs: Arc::clone(&fs),
        fill_at: 300,
        filled: AtomicBool::new(false),
        disk_full: Notify::new(),
        emissions: Mutex::default(),
    });
    // Leases far longer than the outage: an entry emitted twice is a duplicate no expired
    // lease explains.
    let options = DrainOptions::new()
        .owner("full-disk")
        .batch_size(50)
        .lease(TimeDelta::seconds(60))
        .poll_interval(Duration::from_millis(10), Duration::from_millis(100));
    let running = spawn_drain(&store, emitter.clone(), options, std::future::pending());

    tokio::time::timeout(Duration::from_secs(20), emitter.disk_full.notified())
        .await
        .expect("the drain never reached the emission that fills the disk");
    // The outage: the drain meets the full disk on every write for a while.
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    let refused = store
        .enqueue(NewEntry::new("orders", b"late".to_vec()))
        .await
        .expect_err("an enqueue on the full disk");
    crate::full_disk::assert_disk_full("an enqueue during the outage", &refused);
    let stuck = store
        .stats(&outbox_core::StatsRequest::new())
        .await
        .unwrap()
        .counts[&EmissionStatus::Delivered];
    assert!(
        stuck < ENTRIES as u64,
        "the drain finished before the disk filled; the test proved nothing"
    );
    fs.resize("30m");

    let summary = tokio::time::timeout(Duration::from_secs(30), running)
        .await
        .expect("the drain did not recover once the filesystem grew")
        .unwrap();
    let emissions = emitter.emissions.lock().unwrap().clone();
    assert_eq!(emissions.len(), ENTRIES, "entries never emitted");
    let twice: Vec<_> = emissions.iter().filter(|(_, &n)| n > 1).collect();
    assert!(twice.is_empty(), "emitted more than once: {twice:?}");
    let stats = store
        .stats(&outbox_core::StatsRequest::new())
        .await
        .unwrap();
    assert_eq!(
        stats.counts[&EmissionStatus::Delivered],
        ENTRIES as u64,
        "{stats:?}"
    );
    assert_eq!(summary.delivered, ENTRIES as u64, "{summary:?}");
}

/// Delivers everything.
struct Accept;

#[outbox_core::async_trait]
impl Emitter for Accept {
    async fn emit(&self, _: Emission<'_>) -> EmitOutcome {
        EmitOutcome::delivered()
    }
}

/// The failed claims of kind `database` counted so far in this binary.
fn failed_claims() -> u64 {
    crate::metrics_seen::counters(outbox_core::metric_names::FAILED_CYCLES)
        .iter()
        .filter(|(labels, _)| labels == "step=claim,kind=database")
        .map(|(_, n)| n)
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drain_started_on_a_full_disk_counts_its_failed_claims_then_delivers_once_space_returns()
{
    let Some(fs) = Tmpfs::mount("3m") else { return };
    crate::metrics_seen::start();
    let store = fs.store(SqliteStoreConfig::new()).await;
    enqueue_orders(&store, 100).await;
    truncate_wal(store.pool()).await;
    let filler = fs.fill();
    let before = failed_claims();

    let options = DrainOptions::new()
        .owner("started-full")
        .batch_size(50)
        .poll_interval(Duration::from_millis(5), Duration::from_millis(20));
    let running = spawn_drain(&store, Arc::new(Accept), options, std::future::pending());
    // Every claim meets the full disk: each is one failed cycle, counted.
    tokio::time::timeout(Duration::from_secs(10), async {
        while failed_claims() - before < 5 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the drain's claims on the full disk were not counted as failed cycles");
    let delivered = store
        .stats(&outbox_core::StatsRequest::new())
        .await
        .unwrap()
        .counts[&EmissionStatus::Delivered];
    assert_eq!(delivered, 0, "a claim went through on the full disk");

    std::fs::remove_file(filler).unwrap();
    let summary = tokio::time::timeout(Duration::from_secs(20), running)
        .await
        .expect("the drain did not recover once space returned")
        .unwrap();
    assert_eq!(summary.delivered, 100, "{summary:?}");
    let counted = failed_claims() - before;
    assert!(counted >= 5, "{counted} failed claims counted");
    assert_eq!(
        counted, summary.errors,
        "every failed cycle is counted once, as a claim that met a database error"
    );
}
