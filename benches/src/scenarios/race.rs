//! Scenario 2: several workers race over one table, each claiming and completing batches
//! until the backlog or the time budget runs out. A ledger outside the store checks that no
//! row is ever handed to two live leases and that every completion applies (no lease can
//! run out during the race), and times every claim call.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use outbox_core::{AdminClaimStore, ClaimRequest, EntryId, TransitionOutcome};
use uuid::Uuid;

use super::{delivered, long_lease, progress, Cell, Ctx};
use crate::results::RaceRow;
use crate::stats::{percentile_ms, rate};
use crate::subject::{open, Link};

#[derive(Default)]
struct Ledger {
    /// Leases believed live: id -> token.
    live: HashMap<EntryId, Uuid>,
    /// When each row was first claimed, and its place in claim order.
    first_claim: HashMap<EntryId, (Instant, (DateTime<Utc>, EntryId))>,
    samples: Vec<Duration>,
    claimed: u64,
    duplicates: u64,
    lost: u64,
}

/// Runs every (engine, path, batch, latency) cell.
pub async fn run(ctx: &mut Ctx) {
    let workers = ctx.plan.race_workers;
    for cell in ctx.cells() {
        let Cell {
            engine,
            path,
            batch,
            latency_ms,
        } = cell;
        let Some(place) = ctx.loaded(engine, ctx.plan.cell_backlog).await else {
            continue;
        };
        let connections = u32::try_from(workers).expect("worker count fits");
        let link = Link::with_latency(latency_ms);
        let subject = open(&place.location, path, link, connections).await;
        let ledger = Arc::new(Mutex::new(Ledger::default()));
        let started = Instant::now();
        let deadline = started + ctx.plan.cell_budget;
        let tasks: Vec<_> = (0..workers)
            .map(|w| {
                let store = subject.store.clone();
                let ledger = ledger.clone();
                tokio::spawn(worker(w, store, ledger, batch, deadline))
            })
            .collect();
        for t in tasks {
            t.await.expect("race worker");
        }
        let elapsed = started.elapsed();
        let mut l = std::mem::take(&mut *ledger.lock().unwrap());
        let overtaken = longest_overtaken_wait(&l.first_claim);
        let row = RaceRow {
            engine,
            path,
            batch,
            latency_ms,
            workers,
            claimed: l.claimed,
            seconds: elapsed.as_secs_f64(),
            claims_per_s: rate(l.claimed, elapsed),
            p50_ms: percentile_ms(&mut l.samples, 0.50),
            p95_ms: percentile_ms(&mut l.samples, 0.95),
            p99_ms: percentile_ms(&mut l.samples, 0.99),
            duplicate_live_leases: l.duplicates,
            lost_completions: l.lost,
            longest_overtaken_wait_ms: overtaken.as_secs_f64() * 1_000.0,
        };
        progress(format_args!(
            "race {} {} batch {batch} +{latency_ms}ms: {:.0}/s, {} duplicates",
            engine.label(),
            path.label(),
            row.claims_per_s,
            row.duplicate_live_leases
        ));
        ctx.results.races.push(row);
    }
}

async fn worker(
    w: usize,
    store: Arc<dyn AdminClaimStore>,
    ledger: Arc<Mutex<Ledger>>,
    batch: u32,
    deadline: Instant,
) {
    let request = ClaimRequest::new(format!("racer-{w}"), batch, long_lease());
    while Instant::now() < deadline {
        let started = Instant::now();
        let claims = store.claim_pending(&request).await.expect("claim");
        let now = Instant::now();
        if claims.is_empty() {
            return;
        }
        {
            let mut l = ledger.lock().unwrap();
            l.samples.push(now - started);
            l.claimed += claims.len() as u64;
            for c in &claims {
                if l.live.insert(c.id(), c.token).is_some() {
                    l.duplicates += 1;
                }
                let order = (c.entry.created_at, c.id());
                l.first_claim.entry(c.id()).or_insert((now, order));
            }
        }
        // The emission: let the other workers in.
        tokio::task::yield_now().await;
        let results = store
            .complete_batch(delivered(&claims))
            .await
            .expect("complete");
        let mut l = ledger.lock().unwrap();
        for (c, r) in claims.iter().zip(results) {
            if r.outcome != TransitionOutcome::Applied {
                l.lost += 1;
            }
            if l.live.get(&c.id()) == Some(&c.token) {
                l.live.remove(&c.id());
            }
        }
    }
}

/// The longest any row waited, after a row behind it in claim order had been claimed,
/// before it was claimed itself: zero for a race that keeps claim order exactly.
fn longest_overtaken_wait(
    first_claim: &HashMap<EntryId, (Instant, (DateTime<Utc>, EntryId))>,
) -> Duration {
    let mut by_order: Vec<_> = first_claim.values().collect();
    by_order.sort_by_key(|(_, order)| *order);
    let mut earliest_behind: Option<Instant> = None;
    let mut longest = Duration::ZERO;
    for (claimed_at, _) in by_order.into_iter().rev() {
        if let Some(behind) = earliest_behind {
            longest = longest.max(claimed_at.saturating_duration_since(behind));
        }
        earliest_behind = Some(earliest_behind.map_or(*claimed_at, |b| b.min(*claimed_at)));
    }
    longest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overtaken_wait_is_measured_from_the_first_newer_claim() {
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        let key = |n: i64| {
            (
                DateTime::<Utc>::from_timestamp(n, 0).unwrap(),
                EntryId::new(),
            )
        };
        let mut m = HashMap::new();
        // In order: no wait.
        m.insert(EntryId::new(), (at(0), key(1)));
        m.insert(EntryId::new(), (at(10), key(2)));
        assert_eq!(longest_overtaken_wait(&m), Duration::ZERO);
        // The oldest row claimed 30 ms after a newer one.
        m.insert(EntryId::new(), (at(40), key(0)));
        assert_eq!(longest_overtaken_wait(&m), Duration::from_millis(40));
    }
}
