//! Soak: hours of churn in minutes. Entries are enqueued one per transaction at a fixed
//! rate while several drain processes deliver them (each emission takes 20 ms); every few
//! seconds one of them is SIGKILLed and replaced, and the server is restarted twice (a
//! third and two thirds of the way). At the end every entry must be delivered, and every
//! duplicate emission must come from a killed process. Reported: pickup latency (the
//! enqueue returning to the first emission) and the resident memory of the one drain
//! process that is never killed, sampled all along. PostgreSQL only, on a cluster of the
//! scenario's own.

pub mod child;
mod tally;

use std::collections::HashSet;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use outbox_core::NewEntry;
use outbox_testkit::postgres::PgServer;
use tokio::process::{Child, Command};
use tokio::sync::watch;
use uuid::Uuid;

use super::{progress, Ctx};
use crate::location::Location;
use crate::results::SoakRow;
use crate::results::{Engine, StorePath};
use crate::subject::{open, Link, Place};
use child::{Emitted, SoakWorkerSpec};

/// How long each emission takes (after it is logged): a broker's acknowledgement.
const EMISSION_MS: u64 = 20;

/// Runs the soak on PostgreSQL, if it can be reached: on a cluster of its own, which it
/// may restart, where the server binaries are installed; else on the shared server,
/// without restarts (reported).
pub async fn run(ctx: &mut Ctx) {
    if !ctx.engines.contains(&Engine::Postgres) {
        return;
    }
    let private = match tokio::task::spawn_blocking(PgServer::start_private).await {
        Ok(Ok(server)) => Some(&*Box::leak(Box::new(server))),
        Ok(Err(why)) => {
            ctx.skip(format!(
                "soak: server restarts (no cluster of its own: {why})"
            ));
            None
        }
        Err(e) => panic!("soak: starting a cluster panicked: {e}"),
    };
    let dir = tempfile::tempdir().expect("a directory for the soak log");
    let log = dir.path().join("emitted.jsonl");
    let (location, _place) = match private {
        Some(server) => (migrated_on(&server.url).await, None),
        None => {
            let Some(place) = Place::create(Engine::Postgres, "outbox").await else {
                return;
            };
            (place.location.clone(), Some(place))
        }
    };
    let row = soak(ctx, &location, &log, private).await;
    progress(format_args!(
        "soak: {} enqueued, {} kills, {} restarts, {} duplicates ({} from kills), \
         pickup p50 {:.0} ms p99 {:.0} ms, {} undelivered, {} lost",
        row.enqueued,
        row.kills,
        row.restarts,
        row.duplicates,
        row.duplicates_from_kills,
        row.pickup_p50_ms,
        row.pickup_p99_ms,
        row.undelivered,
        row.lost,
    ));
    ctx.results.soak.push(row);
}

/// The soak table, migrated, on the server at `url`.
async fn migrated_on(url: &str) -> Location {
    let location = Location {
        engine: Engine::Postgres,
        url: url.to_owned(),
        schema: None,
        table: "soak_outbox".to_owned(),
    };
    let mut client = outbox_testkit::postgres::connect(url)
        .await
        .unwrap_or_else(|e| panic!("soak: cannot connect to its own cluster: {e}"));
    outbox_postgres::migrate(&mut client, &location.table_name())
        .await
        .expect("migrate the soak table");
    location
}

/// One drain process and the owner name it runs under.
struct Worker {
    owner: String,
    process: Child,
}

async fn spawn(location: &Location, owner: String, ctx: &Ctx, log: &Path) -> Worker {
    let spec = SoakWorkerSpec {
        location: location.clone(),
        owner: owner.clone(),
        lease_ms: super::drain::millis(ctx.plan.soak_lease),
        batch: 50,
        log: log.to_owned(),
        emission_ms: EMISSION_MS,
    };
    let process = Command::new(std::env::current_exe().expect("the bench binary's path"))
        .arg("soak-worker")
        .arg(serde_json::to_string(&spec).expect("spec as JSON"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start a soak drain process");
    Worker { owner, process }
}

async fn soak(
    ctx: &Ctx,
    location: &Location,
    log: &Path,
    server: Option<&'static PgServer>,
) -> SoakRow {
    let plan = &ctx.plan;
    let mut workers = Vec::new();
    for slot in 0..plan.soak_workers {
        workers.push(spawn(location, format!("soak-{slot}-0"), ctx, log).await);
    }
    let started = Instant::now();
    let (stop, stopped) = watch::channel(false);
    let enqueuer = tokio::spawn(enqueue(location.clone(), plan.soak_rate, stopped));
    let mut killed = HashSet::new();
    let mut rss_kib = Vec::new();
    let (mut kills, mut restarts) = (0u32, 0u32);
    let mut sample = tokio::time::interval(plan.soak_sample_every);
    let mut kill = tokio::time::interval_at(
        tokio::time::Instant::now() + plan.soak_kill_every,
        plan.soak_kill_every,
    );
    let restart_at = [plan.soak_duration / 3, plan.soak_duration * 2 / 3];
    while started.elapsed() < plan.soak_duration {
        tokio::select! {
            _ = sample.tick() => {
                if let Some(kib) = workers[0].process.id().and_then(resident_kib) {
                    rss_kib.push((started.elapsed().as_secs_f64(), kib));
                }
            }
            _ = kill.tick() => {
                // Slot 0 is never killed: its memory is the one watched.
                let slot = 1 + kills as usize % (workers.len() - 1);
                let w = &mut workers[slot];
                w.process.start_kill().expect("SIGKILL a drain process");
                w.process.wait().await.expect("reap a drain process");
                killed.insert(w.owner.clone());
                kills += 1;
                let owner = format!("soak-{slot}-{kills}");
                workers[slot] = spawn(location, owner, ctx, log).await;
            }
            () = tokio::time::sleep(Duration::from_millis(100)) => {
                let due = restart_at.get(restarts as usize).is_some_and(|t| started.elapsed() >= *t);
                if let (true, Some(server)) = (due, server) {
                    progress(format_args!("soak: restarting the server"));
                    tokio::task::spawn_blocking(|| server.restart())
                        .await
                        .expect("restart task")
                        .unwrap_or_else(|e| panic!("soak: the server did not restart: {e}"));
                    restarts += 1;
                }
            }
        }
    }
    stop.send_replace(true);
    let seconds = started.elapsed().as_secs_f64();
    let (committed, enqueue_failures) = enqueuer.await.expect("the enqueuer");
    let drained_at = Instant::now();
    let drained = wait_drained(location, plan.soak_lease * 4 + Duration::from_secs(60)).await;
    let drained_after_s = drained_at.elapsed().as_secs_f64();
    for w in &mut workers {
        let _ = w.process.start_kill();
        let _ = w.process.wait().await;
    }
    assert!(
        drained,
        "soak: the queue was not empty in time after the run"
    );
    let rows = table_rows(location).await;
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let emitted: Vec<Emitted> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("soak log line {l:?}: {e}")))
        .collect();
    let t = tally::tally(&emitted, &rows, &committed, &killed);
    SoakRow {
        engine: Engine::Postgres,
        seconds,
        rate_per_s: plan.soak_rate,
        workers: plan.soak_workers,
        batch: 50,
        lease_ms: super::drain::millis(plan.soak_lease),
        kills,
        restarts,
        enqueued: committed.len() as u64,
        enqueue_failures,
        drained_after_s,
        rows: t.rows,
        undelivered: t.undelivered,
        lost: t.lost,
        never_emitted: t.never_emitted,
        duplicates: t.duplicates,
        duplicates_from_kills: t.duplicates_from_kills,
        pickup_p50_ms: t.pickup_ms[0],
        pickup_p99_ms: t.pickup_ms[1],
        pickup_max_ms: t.pickup_ms[2],
        rss_kib,
    }
}

/// Enqueues one entry per transaction, `rate` a second, until stopped; returns the
/// entries whose enqueue returned (id, microseconds since the epoch when it did) and
/// the count of calls that failed. A failed call is not tried again: the host's
/// transaction failed with it.
async fn enqueue(
    location: Location,
    rate: u32,
    stopped: watch::Receiver<bool>,
) -> (Vec<(Uuid, i64)>, u64) {
    let subject = open(&location, StorePath::Optimized, Link::direct(), 2).await;
    let mut tick = tokio::time::interval(Duration::from_secs(1) / rate);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let (mut committed, mut failures) = (Vec::new(), 0);
    while !*stopped.borrow() {
        tick.tick().await;
        let n = committed.len();
        match subject
            .store
            .enqueue(NewEntry::new("soak", format!("{{\"n\":{n}}}").into_bytes()))
            .await
        {
            Ok(entry) => {
                committed.push((entry.id.as_uuid(), chrono::Utc::now().timestamp_micros()))
            }
            Err(_) => failures += 1,
        }
    }
    (committed, failures)
}

/// Waits until no entry is left to deliver; false when `limit` passed first.
async fn wait_drained(location: &Location, limit: Duration) -> bool {
    let client = outbox_testkit::postgres::connect(&location.url)
        .await
        .expect("connect to count what is left");
    let sql = format!(
        "SELECT count(*) FROM {} WHERE status <> 1",
        location.table_name().qualified()
    );
    let started = Instant::now();
    while started.elapsed() < limit {
        let left: i64 = client.query_one(&sql, &[]).await.expect("count").get(0);
        if left == 0 {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    false
}

/// Every row: (id, delivered).
async fn table_rows(location: &Location) -> Vec<(Uuid, bool)> {
    let client = outbox_testkit::postgres::connect(&location.url)
        .await
        .expect("connect to read the table");
    let sql = format!(
        "SELECT id, status = 1 FROM {}",
        location.table_name().qualified()
    );
    client
        .query(&sql, &[])
        .await
        .expect("read the table")
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()
}

/// The resident memory of process `pid`, KiB.
fn resident_kib(pid: u32) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}
