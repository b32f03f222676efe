//! The server restarts in the middle of a drain: the store recovers on fresh
//! connections, and no delivered row is lost or delivered twice.
//!
//! Restarting the server would break every other test sharing it, so the drain runs in a
//! child process that starts a throwaway cluster of its own. A server given by
//! `OUTBOX_TEST_POSTGRES_URL` is never restarted: the test is then reported as skipped.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::TimeDelta;
use outbox_core::{
    ClaimRequest, ClaimStore, Completion, CompletionRequest, EmissionResult, EntryId, FindRequest,
    NewEntry, OutboxStore, TransitionOutcome,
};
use outbox_postgres::PgClaimStore;
use outbox_testkit::postgres::{self, PgTestDb};
use tokio::sync::watch;

use crate::{child, support};

const ROLE: &str = "OUTBOX_IT_RESTART_DRAIN";
const ENTRIES: usize = 3_000;
const WORKERS: usize = 3;
/// Retry pause after a failed call while the server is away.
const RETRY: Duration = Duration::from_millis(20);

#[tokio::test]
async fn the_store_survives_a_server_restart_mid_drain() {
    if std::env::var(postgres::URL_VAR).is_ok_and(|v| !v.trim().is_empty()) {
        outbox_testkit::engines::unavailable(
            "postgres-throwaway",
            "the server comes from OUTBOX_TEST_POSTGRES_URL and may not be restarted; \
             the restart test runs only on a throwaway cluster",
        );
        return;
    }
    let output = tokio::task::spawn_blocking(|| {
        child::command("faults::server_restart::restart_drain_process", ROLE, &[])
            .output()
            .expect("run the restart drain")
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprintln!(
        "{}",
        stderr
            .lines()
            .filter(|l| l.starts_with("restart:"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        output.status.success(),
        "the restart drain failed:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("1 passed"),
        "the restart drain did not run:\n{stdout}"
    );
}

#[derive(Default)]
struct Ledger {
    applied: HashMap<EntryId, usize>,
    /// Entries whose completion failed without an answer: applied or not, unknown.
    ambiguous: HashSet<EntryId>,
    stale: usize,
    errors: usize,
}

/// Where the drain stands, for the restart to happen at a known point.
#[derive(Debug, Default, Clone, Copy)]
struct Progress {
    delivered: usize,
    /// Workers holding a claimed batch until the restart is over.
    holding: usize,
    restarted: bool,
}

/// The drain in its own process, with its own cluster that it restarts midway: two
/// workers hold a claimed batch across the restart and complete it afterwards; a third
/// keeps claiming and completing (slowly, as if emitting) while the server goes away.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn restart_drain_process() {
    if !child::is(ROLE) {
        return;
    }
    let server = tokio::task::spawn_blocking(postgres::server).await.unwrap();
    assert!(
        server.as_ref().is_ok_and(|s| s.is_throwaway()),
        "the restart drain needs a throwaway cluster: {:?}",
        server.err()
    );
    let db: PgTestDb = support::migrated_db().await.expect("the child's cluster");
    let store = Arc::new(support::store(&db, 4).await);
    for _ in 0..ENTRIES / 1000 {
        let batch = (0..1000u32)
            .map(|i| NewEntry::new("t", i.to_be_bytes().to_vec()))
            .collect();
        store.enqueue_batch(batch).await.unwrap();
    }
    let started_at = postmaster_start(&db).await;
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let progress = Arc::new(watch::channel(Progress::default()).0);
    let workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            let (store, ledger, progress) = (store.clone(), ledger.clone(), progress.clone());
            tokio::spawn(drain(format!("w{w}"), w > 0, store, ledger, progress))
        })
        .collect();
    let mut watching = progress.subscribe();
    watching
        .wait_for(|p| p.delivered >= ENTRIES / 3 && p.holding == WORKERS - 1)
        .await
        .expect("progress before the restart");
    tokio::task::spawn_blocking(|| postgres::server().unwrap().restart())
        .await
        .unwrap()
        .expect("restart the cluster");
    progress.send_modify(|p| p.restarted = true);
    eprintln!(
        "restart: done after {} deliveries",
        progress.borrow().delivered
    );
    for w in workers {
        w.await.expect("worker");
    }
    assert_ne!(
        postmaster_start(&db).await,
        started_at,
        "the server did not restart"
    );

    let ledger = std::mem::take(&mut *ledger.lock().unwrap());
    eprintln!(
        "restart: {} applied, {} in doubt after a failed completion, {} stale, {} failed calls",
        ledger.applied.len(),
        ledger.ambiguous.len(),
        ledger.stale,
        ledger.errors
    );
    assert!(
        ledger.applied.values().all(|n| *n == 1),
        "an entry was delivered twice"
    );
    let client = db.connect().await;
    let rows = client
        .query(
            &support::table(&db).render("SELECT id, status FROM {table}"),
            &[],
        )
        .await
        .unwrap();
    assert_eq!(rows.len(), ENTRIES, "rows were lost");
    for row in rows {
        let id = EntryId::from_uuid(row.get(0));
        assert_eq!(row.get::<_, i16>(1), 1, "{id} is not delivered");
        assert!(
            ledger.applied.contains_key(&id) || ledger.ambiguous.contains(&id),
            "{id} is delivered but no completion of it was applied or in doubt"
        );
    }
}

async fn postmaster_start(db: &PgTestDb) -> chrono::DateTime<chrono::Utc> {
    db.connect()
        .await
        .query_one("SELECT pg_postmaster_start_time()", &[])
        .await
        .unwrap()
        .get(0)
}

/// Claims and delivers until nothing is pending, retrying every call that fails while
/// the server is away; a completion is retried with the same claims until it answers.
/// A `holder` keeps its first batch claimed after a third of the entries are delivered
/// until the restart is over.
async fn drain(
    owner: String,
    holder: bool,
    store: Arc<PgClaimStore>,
    ledger: Arc<Mutex<Ledger>>,
    progress: Arc<watch::Sender<Progress>>,
) {
    // Longer than the restart, so no held lease runs out meanwhile.
    let request = ClaimRequest::new(owner, 50, TimeDelta::seconds(5));
    let mut held = false;
    loop {
        let claims = match store.claim_pending(&request).await {
            Ok(c) => c,
            Err(_) => {
                ledger.lock().unwrap().errors += 1;
                tokio::time::sleep(RETRY).await;
                continue;
            }
        };
        if claims.is_empty() {
            match store.find_pending(&FindRequest::new(1)).await {
                Ok(left) if left.is_empty() => return,
                Ok(_) => {}
                Err(_) => ledger.lock().unwrap().errors += 1,
            }
            // Rows a failed claim may have leased come back when their lease runs out.
            tokio::time::sleep(RETRY).await;
            continue;
        }
        let current = *progress.borrow();
        if holder && !held && !current.restarted && current.delivered >= ENTRIES / 3 {
            held = true;
            progress.send_modify(|p| p.holding += 1);
            let mut rx = progress.subscribe();
            rx.wait_for(|p| p.restarted).await.expect("restart");
        } else if !holder {
            // Emitting takes a while, so this worker is mid-call when the server stops.
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        let reqs: Vec<_> = claims
            .iter()
            .map(|c| {
                CompletionRequest::new(c.clone(), Completion::Delivered(EmissionResult::new()))
            })
            .collect();
        let results = loop {
            match store.complete_batch(reqs.clone()).await {
                Ok(r) => break r,
                Err(_) => {
                    {
                        let mut l = ledger.lock().unwrap();
                        l.errors += 1;
                        l.ambiguous.extend(claims.iter().map(|c| c.id()));
                    }
                    tokio::time::sleep(RETRY).await;
                }
            }
        };
        let mut l = ledger.lock().unwrap();
        for r in results {
            match r.outcome {
                TransitionOutcome::Applied => *l.applied.entry(r.entry.id).or_default() += 1,
                // Delivered by an earlier try of this completion whose answer was lost, or
                // (only if a lease ran out during the restart) by whoever reclaimed it.
                TransitionOutcome::Terminal if l.ambiguous.contains(&r.entry.id) => {}
                TransitionOutcome::Terminal | TransitionOutcome::StaleClaim => l.stale += 1,
                other => panic!("unexpected outcome {other:?} for {}", r.entry.id),
            }
        }
        let delivered = l.applied.len();
        drop(l);
        progress.send_modify(|p| p.delivered = delivered);
    }
}
