//! The race harness: many workers claim and complete one table at once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeDelta, Utc};
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

/// Enqueues `n` entries numbered from 0, in batches the store takes.
async fn enqueue_numbered(store: &dyn ClaimStore, n: usize) {
    let max = store.limits().max_batch_size as usize;
    for chunk in (0..n).collect::<Vec<_>>().chunks(max) {
        let batch = chunk
            .iter()
            .map(|i| NewEntry::new("race", i.to_le_bytes().to_vec()))
            .collect();
        store.enqueue_batch(batch).await.expect("enqueue");
    }
}

/// Enqueues `config.entries` entries, then runs `config.workers` workers that claim,
/// "emit" and complete until all are delivered. Panics with the first violations if an
/// entry was ever held by two leases at once, emitted twice, or not delivered exactly once.
pub async fn claim_and_complete(store: Arc<dyn ClaimStore>, config: RaceConfig) -> RaceReport {
    enqueue_numbered(store.as_ref(), config.entries).await;
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

/// How an expiring-lease race is run: leases short enough that slow emissions outlive
/// them, so entries are reclaimed while their first holder still works on them.
#[derive(Debug, Clone)]
pub struct ExpiryRaceConfig {
    /// Concurrent workers (tasks).
    pub workers: usize,
    /// Entries enqueued before the workers start.
    pub entries: usize,
    /// Claim batch size per worker call.
    pub batch_size: u32,
    /// Lease length.
    pub lease: TimeDelta,
    /// One emission in this many takes `slow` (longer than the lease); the slow rounds
    /// are staggered across workers.
    pub slow_every: usize,
    /// The slow emission time.
    pub slow: Duration,
    /// Give up (and fail) after this long.
    pub deadline: Duration,
}

impl Default for ExpiryRaceConfig {
    fn default() -> Self {
        Self {
            workers: 6,
            entries: 300,
            batch_size: 10,
            lease: TimeDelta::milliseconds(300),
            slow_every: 4,
            slow: Duration::from_millis(450),
            deadline: Duration::from_secs(120),
        }
    }
}

#[derive(Default)]
struct ExpiryLedger {
    /// Every token handed out per entry, with the time its lease began. They are judged
    /// in that order, not in the order the claims came back: a per-row claim of a batch
    /// can return after the lease of its first row has run out and been taken again.
    issued: HashMap<EntryId, Vec<(DateTime<Utc>, Uuid)>>,
    /// The token of each applied delivery.
    applied: HashMap<EntryId, Vec<Uuid>>,
    /// Renewals that came back renewed, and lost.
    renewed: usize,
    lost: usize,
}

/// What an expiring-lease race observed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpiryRaceReport {
    /// Entries claimed more than once (their lease ran out under a slow holder).
    pub reclaimed: usize,
    /// Renewals that held, and that found the lease taken.
    pub renewed: usize,
    /// Renewals that found the lease gone.
    pub lost: usize,
}

/// Workers claim, sometimes emit for longer than the lease, sometimes renew first, and
/// deliver. Panics unless every entry was delivered by exactly one applied completion,
/// made with the last token handed out for it: no stale holder's completion (one whose
/// entry was reclaimed meanwhile) was ever applied, and none was lost.
pub async fn expiring_leases(
    store: Arc<dyn ClaimStore>,
    config: ExpiryRaceConfig,
) -> ExpiryRaceReport {
    enqueue_numbered(store.as_ref(), config.entries).await;
    let ledger = Arc::new(Mutex::new(ExpiryLedger::default()));
    let started = Instant::now();
    let mut workers = Vec::new();
    for w in 0..config.workers {
        let (store, ledger, config) = (store.clone(), ledger.clone(), config.clone());
        workers.push(tokio::spawn(async move {
            expiry_worker(w, store, ledger, config, started).await
        }));
    }
    for w in workers {
        w.await.expect("worker panicked");
    }
    let ledger = ledger.lock().unwrap();
    let mut violations = Vec::new();
    for (id, issued) in &ledger.issued {
        let mut issued = issued.clone();
        issued.sort();
        let tokens: Vec<Uuid> = issued.into_iter().map(|(_, token)| token).collect();
        let applied = ledger.applied.get(id).cloned().unwrap_or_default();
        if applied.len() != 1 {
            violations.push(format!("{id}: {} applied deliveries", applied.len()));
        } else if applied[0] != *tokens.last().expect("issued") {
            violations.push(format!(
                "{id}: delivered with token {} of {} handed out, not the last",
                tokens
                    .iter()
                    .position(|t| *t == applied[0])
                    .map_or(0, |p| p + 1),
                tokens.len()
            ));
        }
    }
    assert_eq!(
        ledger.issued.len(),
        config.entries,
        "not every entry was claimed"
    );
    assert!(
        violations.is_empty(),
        "expiring-lease race violations: {:#?}",
        &violations[..violations.len().min(10)]
    );
    ExpiryRaceReport {
        reclaimed: ledger.issued.values().filter(|t| t.len() > 1).count(),
        renewed: ledger.renewed,
        lost: ledger.lost,
    }
}

async fn expiry_worker(
    w: usize,
    store: Arc<dyn ClaimStore>,
    ledger: Arc<Mutex<ExpiryLedger>>,
    config: ExpiryRaceConfig,
    started: Instant,
) {
    let request = ClaimRequest::new(format!("expiring-{w}"), config.batch_size, config.lease);
    let mut n = 0usize;
    loop {
        assert!(
            started.elapsed() < config.deadline,
            "race did not finish within {:?}",
            config.deadline
        );
        let mut claims = store.claim_pending(&request).await.expect("claim");
        if claims.is_empty() {
            let delivered = ledger.lock().unwrap().applied.len();
            if delivered >= config.entries {
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
            continue;
        }
        {
            let mut l = ledger.lock().unwrap();
            for c in &claims {
                l.issued
                    .entry(c.id())
                    .or_default()
                    .push((c.claimed_at, c.token));
            }
        }
        n += 1;
        // Staggered by worker: workers that keep pace would otherwise all sleep through
        // the same round, with nobody left claiming to reclaim what runs out under them.
        let slow = (n + w).is_multiple_of(config.slow_every);
        if slow {
            // A slow emission: the leases run out under it, and others may reclaim.
            tokio::time::sleep(config.slow).await;
        } else {
            tokio::task::yield_now().await;
        }
        if slow || n.is_multiple_of(3) {
            // Renew first: racing any reclaim of the entries whose leases ran out.
            let renewed = store
                .renew(&claims, &outbox_core::RenewRequest::new(config.lease))
                .await
                .expect("renew");
            let mut l = ledger.lock().unwrap();
            claims = claims
                .into_iter()
                .zip(renewed)
                .map(|(old, outcome)| match outcome {
                    outbox_core::RenewOutcome::Renewed(c) => {
                        l.renewed += 1;
                        c
                    }
                    outbox_core::RenewOutcome::Lost(_) => {
                        l.lost += 1;
                        old // completed anyway below: it must not apply
                    }
                })
                .collect();
        }
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
                l.applied.entry(c.id()).or_default().push(c.token);
            }
        }
    }
}
