//! A drain process SIGKILLed while it writes (issue #30): the next process opens the file
//! (SQLite recovers the write-ahead log the dead one left), no entry is lost, the file is
//! intact, and the only entries emitted twice are ones the killed process had emitted
//! under leases it never completed.
//!
//! The doomed drain's emitter only appends a line to a file, so the process spends most
//! of its time in SQLite's claims and completions: the kill lands mid-transaction or
//! between two, never with the log checkpointed away (the test checks the log is there).

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::TimeDelta;
use outbox_core::drain::{DrainOptions, Emission, EmitOutcome, Emitter};
use outbox_core::{EmissionStatus, OutboxAdmin};
use outbox_sqlite::{SqliteClaimStore, SqliteStoreConfig};
use outbox_testkit::child;

use crate::support::{enqueue_orders, spawn_drain, store_at};

const ROLE: &str = "OUTBOX_SQLITE_IT_DOOMED_DRAIN";
const DB: &str = "OUTBOX_SQLITE_IT_DB";
const LOG: &str = "OUTBOX_SQLITE_IT_EMITTED";
const ENTRIES: usize = 20_000;

/// Appends each emitted entry's id to a file, one line per emission, before reporting it
/// delivered: what a process killed afterwards had emitted is on disk.
struct AppendsIds {
    log: Mutex<std::fs::File>,
}

impl AppendsIds {
    fn to(path: &Path) -> Self {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .expect("open the emission log");
        Self {
            log: Mutex::new(log),
        }
    }
}

#[outbox_core::async_trait]
impl Emitter for AppendsIds {
    async fn emit(&self, emission: Emission<'_>) -> EmitOutcome {
        let line = format!("{}\n", emission.entry.id);
        self.log
            .lock()
            .expect("the log's lock")
            .write_all(line.as_bytes())
            .expect("append to the emission log");
        EmitOutcome::delivered()
    }
}

/// The ids in an emission log, in order.
fn emitted(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Two leases' worth of options: batches of 100, leases the survivor waits out.
fn options(owner: &str) -> DrainOptions {
    DrainOptions::new()
        .owner(owner)
        .batch_size(100)
        .lease(TimeDelta::seconds(2))
        .poll_interval(Duration::from_millis(10), Duration::from_millis(100))
}

/// The doomed drain: drains the parent's file until it is killed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doomed_drain_process() {
    if !child::is(ROLE) {
        return;
    }
    let db = child::var(DB);
    let store = SqliteClaimStore::open(&db, SqliteStoreConfig::new())
        .await
        .expect("open the parent's file");
    let emitter = Arc::new(AppendsIds::to(Path::new(&child::var(LOG))));
    spawn_drain(&store, emitter, options("doomed"), std::future::pending())
        .await
        .expect("the drain");
    panic!("the doomed drain finished before it was killed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drain_killed_mid_write_loses_nothing_and_repeats_only_its_own_leases() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("outbox.db");
    {
        let store = store_at(&db, SqliteStoreConfig::new()).await;
        enqueue_orders(&store, ENTRIES).await;
        store.pool().close().await;
    }
    let doomed_log = dir.path().join("doomed.log");
    let mut doomed = child::command(
        "killed_mid_write::doomed_drain_process",
        ROLE,
        &[
            (DB, db.to_str().expect("utf-8 path")),
            (LOG, doomed_log.to_str().expect("utf-8 path")),
        ],
    )
    .stdout(std::process::Stdio::null())
    .spawn()
    .expect("spawn the doomed drain");
    let deadline = Instant::now() + Duration::from_secs(60);
    while emitted(&doomed_log).len() < 3_000 {
        assert!(
            Instant::now() < deadline,
            "the doomed drain never got going"
        );
        assert!(
            doomed.try_wait().unwrap().is_none(),
            "the doomed drain died"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    doomed.kill().expect("SIGKILL the drain");
    doomed.wait().expect("reap it");
    let wal = std::fs::metadata(dir.path().join("outbox.db-wal")).map_or(0, |m| m.len());
    assert!(wal > 0, "no write-ahead log was left to recover");

    // The next process: a new pool on the file recovers the log.
    let store = SqliteClaimStore::open(db.to_str().unwrap(), SqliteStoreConfig::new())
        .await
        .expect("open the file the killed drain left");
    let check: String = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(check, "ok");
    let stats = store
        .stats(&outbox_core::StatsRequest::new())
        .await
        .unwrap();
    let total: u64 = stats.counts.values().sum();
    assert_eq!(total, ENTRIES as u64, "entries lost: {stats:?}");
    let delivered_before = stats
        .counts
        .get(&EmissionStatus::Delivered)
        .copied()
        .unwrap_or(0);
    let doomed_emitted = emitted(&doomed_log);
    let leased_by_doomed = stats.claims_in_flight;

    // The survivor waits out the dead drain's leases and delivers the rest.
    let survivor_log = dir.path().join("survivor.log");
    let summary = tokio::time::timeout(
        Duration::from_secs(120),
        spawn_drain(
            &store,
            Arc::new(AppendsIds::to(&survivor_log)),
            options("survivor"),
            std::future::pending(),
        ),
    )
    .await
    .expect("the survivor did not finish")
    .unwrap();
    let after = store
        .stats(&outbox_core::StatsRequest::new())
        .await
        .unwrap();
    assert_eq!(
        after.counts[&EmissionStatus::Delivered],
        ENTRIES as u64,
        "{after:?}"
    );

    let survivor_emitted = emitted(&survivor_log);
    let mut times: HashMap<&str, (u32, u32)> = HashMap::new();
    for id in &doomed_emitted {
        times.entry(id).or_default().0 += 1;
    }
    for id in &survivor_emitted {
        times.entry(id).or_default().1 += 1;
    }
    assert_eq!(times.len(), ENTRIES, "entries never emitted");
    assert!(
        times.values().all(|&(d, s)| d <= 1 && s <= 1),
        "a drain emitted an entry twice by itself"
    );
    let repeated = times.values().filter(|&&(d, s)| d + s > 1).count();
    assert!(
        repeated as u64 <= leased_by_doomed,
        "{repeated} entries emitted by both drains, more than the {leased_by_doomed} the killed one held"
    );
    // The survivor emitted exactly what the killed drain had not recorded.
    assert_eq!(
        survivor_emitted.len() as u64,
        ENTRIES as u64 - delivered_before
    );
    assert_eq!(summary.delivered, ENTRIES as u64 - delivered_before);
    println!(
        "killed after {} emissions ({wal} bytes of log left); it held {leased_by_doomed} leases, {repeated} entries emitted again",
        doomed_emitted.len()
    );
}
