//! Four worker processes over one table: every entry delivered once, and no entry ever
//! under two live leases.

use std::collections::HashMap;
use std::io::Write;
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeDelta, Utc};
use outbox_core::{
    ClaimRequest, ClaimStore, Completion, CompletionRequest, EmissionResult, FindRequest, NewEntry,
    OutboxStore,
};

use crate::{child, support};

const ROLE: &str = "OUTBOX_IT_RACE_WORKER";
const WORKERS: usize = 4;
const ENTRIES: usize = 50_000;

/// A worker process: claims batches under its owner name, "emits" them and delivers
/// them, logging every claim and every completion outcome, until nothing is pending.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn race_worker_process() {
    if !child::is(ROLE) {
        return;
    }
    let owner = child::var(child::OWNER);
    let store = child::store().await;
    let mut log = std::io::BufWriter::new(std::fs::File::create(child::var(child::LOG)).unwrap());
    let request = ClaimRequest::new(owner.clone(), 50, TimeDelta::minutes(10));
    loop {
        let claims = store.claim_pending(&request).await.expect("claim");
        if claims.is_empty() {
            if store
                .find_pending(&FindRequest::new(1))
                .await
                .unwrap()
                .is_empty()
            {
                break;
            }
            // Others hold the rest; look again shortly.
            tokio::time::sleep(Duration::from_millis(5)).await;
            continue;
        }
        for c in &claims {
            writeln!(
                log,
                "claim {} {} {} {} {}",
                c.id(),
                c.owner,
                c.token,
                c.claimed_at.timestamp_micros(),
                c.expires_at.timestamp_micros()
            )
            .unwrap();
        }
        let reqs = claims
            .iter()
            .map(|c| {
                CompletionRequest::new(c.clone(), Completion::Delivered(EmissionResult::new()))
            })
            .collect();
        let results = store.complete_batch(reqs).await.expect("complete");
        for (c, r) in claims.iter().zip(results) {
            writeln!(log, "done {} {} {} {}", c.id(), c.owner, c.token, r.outcome).unwrap();
        }
    }
    log.flush().unwrap();
}

#[derive(Debug)]
struct Lease {
    token: String,
    owner: String,
    from: DateTime<Utc>,
    until: DateTime<Utc>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_worker_processes_share_one_table() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let store = support::store(&db, 2).await;
    for chunk in 0..ENTRIES / 1000 {
        let batch = (0..1000)
            .map(|i| NewEntry::new("race", format!("{chunk}-{i}").into_bytes()))
            .collect();
        store.enqueue_batch(batch).await.unwrap();
    }
    let dir = std::env::temp_dir().join(format!("outbox-race-{}", db.schema));
    std::fs::create_dir_all(&dir).unwrap();
    let started = Instant::now();
    let children: Vec<_> = (0..WORKERS)
        .map(|w| {
            let owner = format!("proc-{w}");
            let log = dir.join(format!("{owner}.log"));
            child::command(
                "race_processes::race_worker_process",
                ROLE,
                &[
                    (child::URL, db.url.as_str()),
                    (child::SCHEMA, db.schema.as_str()),
                    (child::OWNER, owner.as_str()),
                    (child::LOG, log.to_str().unwrap()),
                ],
            )
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("spawn a worker process")
        })
        .collect();
    let outputs: Vec<_> = tokio::task::spawn_blocking(move || {
        children
            .into_iter()
            .map(|c| c.wait_with_output().expect("wait for a worker process"))
            .collect()
    })
    .await
    .unwrap();
    for out in &outputs {
        assert!(out.status.success(), "a worker process failed: {out:?}");
    }
    eprintln!(
        "{WORKERS} processes drained {ENTRIES} entries in {:?}",
        started.elapsed()
    );

    let mut leases: HashMap<String, Vec<Lease>> = HashMap::new();
    let mut applied: HashMap<String, usize> = HashMap::new();
    let mut per_owner: HashMap<String, usize> = HashMap::new();
    for w in 0..WORKERS {
        let text = std::fs::read_to_string(dir.join(format!("proc-{w}.log"))).unwrap();
        for line in text.lines() {
            let f: Vec<&str> = line.split(' ').collect();
            let micros = |s: &str| DateTime::from_timestamp_micros(s.parse().unwrap()).unwrap();
            match f[0] {
                "claim" => leases.entry(f[1].to_owned()).or_default().push(Lease {
                    owner: f[2].to_owned(),
                    token: f[3].to_owned(),
                    from: micros(f[4]),
                    until: micros(f[5]),
                }),
                "done" => {
                    assert_eq!(f[4], "applied", "a completion was not applied: {line}");
                    *applied.entry(f[1].to_owned()).or_default() += 1;
                    *per_owner.entry(f[2].to_owned()).or_default() += 1;
                }
                other => panic!("unknown record {other}"),
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
    eprintln!("deliveries per worker process: {per_owner:?}");
    assert_eq!(applied.len(), ENTRIES, "not every entry was delivered");
    assert!(
        applied.values().all(|n| *n == 1),
        "an entry was delivered twice"
    );
    for (id, list) in &mut leases {
        list.sort_by_key(|l| l.from);
        for pair in list.windows(2) {
            assert!(
                pair[1].from >= pair[0].until,
                "{id} was leased to {} ({}) while {} ({}) still held it",
                pair[1].owner,
                pair[1].token,
                pair[0].owner,
                pair[0].token
            );
        }
        // No lease expired during the run, so nothing may have been claimed twice.
        assert_eq!(list.len(), 1, "{id} was claimed {} times", list.len());
    }
    let delivered: i64 = db
        .connect()
        .await
        .query_one(
            &support::table(&db).render("SELECT count(*) FROM {table} WHERE status = 1"),
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(delivered, i64::try_from(ENTRIES).unwrap());
}
