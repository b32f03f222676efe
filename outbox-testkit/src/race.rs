//! The race harness: many workers claim and complete one table at once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::TimeDelta;
use outbox_core::{
    ClaimRequest, ClaimStore, Completion, CompletionRequest, EmissionResult, EntryId, NewEntry,
    TransitionOutcome,
};
use uuid::Uuid;

/// How a race is run.
#[derive(Debug, Clone)]
pub struct RaceConfig {
    /// Concurrent workers (tasks).
    pub workers: usize,
    /// Entries enqueued before the workers start.
    pub entries: usize,
    /// Claim batch size per worker call.
    pub batch_size: u32,
    /// Lease length; long enough that no lease expires during the run.
    pub lease: TimeDelta,
    /// Give up (and fail) after this long.
    pub deadline: Duration,
}

impl Default for RaceConfig {
    fn default() -> Self {
        Self {
            workers: 8,
            entries: 10_000,
            batch_size: 25,
            lease: TimeDelta::minutes(10),
            deadline: Duration::from_secs(300),
        }
    }
}

/// What a race observed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RaceReport {
    /// Entries delivered (applied delivered transitions).
    pub delivered: usize,
    /// Claims handed out in total.
    pub claims: usize,
    /// Claim calls that came back empty while work remained.
    pub empty_claims: usize,
}

#[derive(Default)]
struct Ledger {
    /// Leases the harness currently believes live: id -> (owner, token).
    live: HashMap<EntryId, (String, Uuid)>,
    emitted: HashMap<EntryId, usize>,
    delivered: usize,
    claims: usize,
    empty_claims: usize,
    violations: Vec<String>,
}

/// Enqueues `config.entries` entries, then runs `config.workers` workers that claim,
/// "emit" and complete until all are delivered. Panics with the first violations if an
/// entry was ever held by two leases at once, emitted twice, or not delivered exactly once.
pub async fn claim_and_complete(store: Arc<dyn ClaimStore>, config: RaceConfig) -> RaceReport {
    let max = store.limits().max_batch_size as usize;
    for chunk in (0..config.entries).collect::<Vec<_>>().chunks(max) {
        let batch = chunk
            .iter()
            .map(|i| NewEntry::new("race", i.to_le_bytes().to_vec()))
            .collect();
        store.enqueue_batch(batch).await.expect("enqueue");
    }
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let started = Instant::now();
    let mut workers = Vec::new();
    for w in 0..config.workers {
        let (store, ledger, config) = (store.clone(), ledger.clone(), config.clone());
        workers.push(tokio::spawn(async move {
            worker(format!("racer-{w}"), store, ledger, config, started).await
        }));
    }
    for w in workers {
        w.await.expect("worker panicked");
    }
    let ledger = ledger.lock().unwrap();
    assert!(
        ledger.violations.is_empty(),
        "race violations: {:#?}",
        &ledger.violations[..ledger.violations.len().min(10)]
    );
    assert_eq!(
        ledger.delivered, config.entries,
        "not every entry was delivered"
    );
    assert_eq!(
        ledger.emitted.len(),
        config.entries,
        "not every entry was emitted"
    );
    assert!(
        ledger.emitted.values().all(|n| *n == 1),
        "an entry was emitted twice"
    );
    RaceReport {
        delivered: ledger.delivered,
        claims: ledger.claims,
        empty_claims: ledger.empty_claims,
    }
}

async fn worker(
    owner: String,
    store: Arc<dyn ClaimStore>,
    ledger: Arc<Mutex<Ledger>>,
    config: RaceConfig,
    started: Instant,
) {
    let request = ClaimRequest::new(owner.clone(), config.batch_size, config.lease);
    loop {
        assert!(
            started.elapsed() < config.deadline,
            "race did not finish within {:?}",
            config.deadline
        );
        let claims = store.claim_pending(&request).await.expect("claim");
        {
            let mut l = ledger.lock().unwrap();
            if claims.is_empty() {
                if l.delivered >= config.entries {
                    return;
                }
                l.empty_claims += 1;
            }
            l.claims += claims.len();
            for c in &claims {
                if let Some((other, _)) = l.live.insert(c.id(), (c.owner.clone(), c.token)) {
                    l.violations.push(format!(
                        "{} claimed by {owner} while {other} held it",
                        c.id()
                    ));
                }
                *l.emitted.entry(c.id()).or_default() += 1;
            }
        }
        if claims.is_empty() {
            tokio::task::yield_now().await;
            continue;
        }
        // The emission itself: give other workers a chance to interleave.
        tokio::task::yield_now().await;
        let reqs = claims
            .iter()
            .map(|c| {
                CompletionRequest::new(c.clone(), Completion::Delivered(EmissionResult::new()))
            })
            .collect();
        let results = store.complete_batch(reqs).await.expect("complete");
        let mut l = ledger.lock().unwrap();
        for (c, r) in claims.iter().zip(results) {
            if r.outcome == TransitionOutcome::Applied {
                l.delivered += 1;
            } else {
                l.violations.push(format!(
                    "{} completion by {owner} was {:?}",
                    c.id(),
                    r.outcome
                ));
            }
            if l.live.get(&c.id()) == Some(&(c.owner.clone(), c.token)) {
                l.live.remove(&c.id());
            }
        }
    }
}
