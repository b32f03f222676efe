//! A worker process SIGKILLed between its claim and its completion: its rows stay leased
//! until the lease runs out, then another worker reclaims and delivers them.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::Duration;

use chrono::TimeDelta;
use outbox_core::{
    ClaimRequest, ClaimStore, Completion, CompletionRequest, EmissionResult, EmissionStatus,
    NewEntry, OutboxStore,
};

use crate::{child, support};

const ROLE: &str = "OUTBOX_IT_DOOMED_WORKER";
const DOOMED: usize = 20;

/// The doomed worker: claims a batch, says so on stdout, and waits to be killed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doomed_worker_process() {
    if !child::is(ROLE) {
        return;
    }
    let store = child::store().await;
    let request = ClaimRequest::new(child::var(child::OWNER), 20, TimeDelta::seconds(30));
    let claims = store.claim_pending(&request).await.expect("claim");
    println!("CLAIMED {}", claims.len());
    // Killed here, mid-batch: emitted perhaps, completed never. (Should the parent be
    // gone, the process still ends, failing, after a while.)
    tokio::time::sleep(Duration::from_secs(120)).await;
    panic!("the doomed worker was never killed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_of_a_killed_worker_are_reclaimed_after_the_lease() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let store = support::store(&db, 2).await;
    let written = store
        .enqueue_batch((0..30u8).map(|i| NewEntry::new("t", vec![i])).collect())
        .await
        .unwrap();
    let mut worker = child::command(
        "faults::killed_worker::doomed_worker_process",
        ROLE,
        &[
            (child::URL, db.url.as_str()),
            (child::SCHEMA, db.schema.as_str()),
            (child::OWNER, "doomed"),
        ],
    )
    .stdout(Stdio::piped())
    .spawn()
    .expect("spawn the doomed worker");
    let stdout = worker.stdout.take().unwrap();
    let worker = tokio::task::spawn_blocking(move || {
        let mut seen = Vec::new();
        let mut claimed = None;
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            // The test harness prefixes the line with the test's name.
            if let Some(n) = line.split("CLAIMED ").nth(1) {
                claimed = n.trim().parse::<usize>().ok();
                break;
            }
            seen.push(line);
        }
        let mut worker = worker;
        worker.kill().expect("SIGKILL the worker");
        worker.wait().expect("reap the worker");
        (claimed, seen)
    });
    let (claimed, seen) = worker.await.unwrap();
    assert_eq!(
        claimed,
        Some(DOOMED),
        "the worker did not claim; it said {seen:#?}"
    );

    let mut held = Vec::new();
    for e in &written {
        let row = store.get(e.id).await.unwrap().unwrap();
        if row.claim_owner.as_deref() == Some("doomed") {
            held.push(row);
        }
    }
    assert_eq!(held.len(), DOOMED);
    // While the dead worker's leases run, nobody may take its rows.
    let rescue = ClaimRequest::new("rescuer", 100, TimeDelta::seconds(30));
    let others = store.claim_pending(&rescue).await.unwrap();
    assert_eq!(others.len(), written.len() - DOOMED);
    assert!(others.iter().all(|c| held.iter().all(|h| h.id != c.id())));
    // Once they ran out (time injected: the latest expiry), the rows come back.
    let expiry = held
        .iter()
        .filter_map(|h| h.claim_expires_at)
        .max()
        .unwrap();
    let reclaimed = store
        .claim_pending(&rescue.clone().at(expiry))
        .await
        .unwrap();
    assert_eq!(reclaimed.len(), DOOMED);
    assert!(
        reclaimed.iter().all(|c| c.acquisition == 2),
        "the reclaim is not counted"
    );
    let done = store
        .complete_batch(
            reclaimed
                .iter()
                .chain(&others)
                .map(|c| {
                    CompletionRequest::new(c.clone(), Completion::Delivered(EmissionResult::new()))
                })
                .collect(),
        )
        .await
        .unwrap();
    assert!(done.iter().all(|r| r.is_applied()));
    for h in &held {
        let row = store.get(h.id).await.unwrap().unwrap();
        assert_eq!(row.status, EmissionStatus::Delivered);
        assert_eq!(row.claim_attempt_count, 2);
    }
}
