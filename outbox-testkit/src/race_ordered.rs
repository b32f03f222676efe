//! The ordered race: many workers drain keyed entries in per-key order, some of them too
//! slowly for their leases, and every key's emissions must come out in creation order.
//! Workers behave as the drain does: a claim not yet emitted is renewed once its lease has
//! aged a third, and dropped if the renewal finds it lost.
//! A lease that runs out may repeat an entry (another worker reclaims and emits it again);
//! it must never let a later entry of the key overtake it. Claims take key runs; a worker
//! that finds a claim lost drops the rest of that key's run, as the drain does.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{TimeDelta, Utc};
use outbox_core::{
    ClaimRequest, ClaimStore, Completion, CompletionRequest, EmissionResult, EntryId, NewEntry,
    RenewOutcome, RenewRequest,
};

/// How an ordered race is run.
#[derive(Debug, Clone)]
pub struct OrderedRaceConfig {
    /// Concurrent workers (tasks).
    pub workers: usize,
    /// Partition keys the entries are spread over, round robin.
    pub keys: usize,
    /// Entries enqueued before the workers start.
    pub entries: usize,
    /// Claim batch size per worker call.
    pub batch_size: u32,
    /// The longest key run a claim takes (`ClaimRequest::key_run`).
    pub key_run: u32,
    /// Lease length.
    pub lease: TimeDelta,
    /// Every this many emissions, one takes `slow` (longer than the lease).
    pub slow_every: usize,
    /// How long a slow emission takes.
    pub slow: Duration,
    /// Give up (and fail) after this long.
    pub deadline: Duration,
}

impl Default for OrderedRaceConfig {
    fn default() -> Self {
        Self {
            workers: 8,
            keys: 1_000,
            entries: 50_000,
            batch_size: 100,
            key_run: 10,
            lease: TimeDelta::milliseconds(300),
            slow_every: 2_000,
            slow: Duration::from_millis(600),
            deadline: Duration::from_secs(300),
        }
    }
}

/// What an ordered race observed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderedRaceReport {
    /// Entries delivered (applied delivered transitions).
    pub delivered: usize,
    /// Emissions in all, repeats included.
    pub emissions: usize,
    /// Emissions of an entry already emitted before (after its lease ran out).
    pub repeated: usize,
}

/// The race the issue of per-key order asks of every store: [`OrderedRaceConfig::default`]
/// (8 workers, 1,000 keys, 50,000 entries, some emissions outliving their leases) on
/// `store`, whose report is printed under `label`. Fails unless some lease ran out, so
/// that a reclaim was raced.
pub async fn eight_workers_a_thousand_keys(label: &str, store: Arc<dyn ClaimStore>) {
    let started = Instant::now();
    let report = ordered_race(store, OrderedRaceConfig::default()).await;
    eprintln!(
        "{label} ordered race: {report:?} in {:?}",
        started.elapsed()
    );
    assert!(
        report.repeated > 0,
        "no lease ran out under a slow emission, so no reclaim was raced: {report:?}"
    );
}

/// The race at few keys: [`OrderedRaceConfig::default`] with its 8 workers on 10 keys of
/// 500 entries each, so the workers contend for every head and each claim takes key runs.
pub async fn eight_workers_ten_keys(label: &str, store: Arc<dyn ClaimStore>) {
    let started = Instant::now();
    let config = OrderedRaceConfig {
        keys: 10,
        entries: 5_000,
        slow_every: 500,
        ..OrderedRaceConfig::default()
    };
    let report = ordered_race(store, config).await;
    eprintln!(
        "{label} ordered race at 10 keys: {report:?} in {:?}",
        started.elapsed()
    );
    assert!(
        report.repeated > 0,
        "no lease ran out under a slow emission, so no reclaim was raced: {report:?}"
    );
}

/// Enqueues `config.entries` entries over `config.keys` keys, each key's entries created
/// a microsecond apart in enqueue order, then runs `config.workers` workers claiming in
/// key order until all are delivered. Panics if a key's emissions ever went backwards,
/// if an entry was not delivered exactly once, or past the deadline.
pub async fn ordered_race(
    store: Arc<dyn ClaimStore>,
    config: OrderedRaceConfig,
) -> OrderedRaceReport {
    let sequence = enqueue_keyed(store.as_ref(), &config).await;
    let sequence = Arc::new(sequence);
    // Emissions in the order they started: (key, position within the key).
    let log: Arc<Mutex<Vec<(usize, usize, EntryId)>>> = Arc::default();
    let delivered = Arc::new(AtomicUsize::new(0));
    let emissions = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut workers = Vec::new();
    for w in 0..config.workers {
        let (store, sequence, log) = (Arc::clone(&store), Arc::clone(&sequence), Arc::clone(&log));
        let (delivered, emissions, config) = (
            Arc::clone(&delivered),
            Arc::clone(&emissions),
            config.clone(),
        );
        workers.push(tokio::spawn(async move {
            let request =
                ClaimRequest::new(format!("ordered-{w}"), config.batch_size, config.lease)
                    .in_key_runs(config.key_run);
            let renew_after = (config.lease / 3).to_std().expect("a positive lease");
            while delivered.load(Ordering::SeqCst) < config.entries {
                assert!(
                    started.elapsed() < config.deadline,
                    "the ordered race did not finish in {:?}",
                    config.deadline
                );
                let mut claims = store.claim_next(&request).await.expect("claim");
                if claims.is_empty() {
                    tokio::time::sleep(Duration::from_millis(2)).await;
                    continue;
                }
                // As a drain does: leases of claims not yet emitted are renewed once they
                // have aged a third of the lease, and a claim found lost is dropped, never
                // emitted (another worker has it, or already delivered it).
                let mut leased_at = Instant::now();
                let mut emitted = Vec::with_capacity(claims.len());
                while !claims.is_empty() {
                    if leased_at.elapsed() >= renew_after {
                        let renewed = store
                            .renew(&claims, &RenewRequest::new(config.lease))
                            .await
                            .expect("renew");
                        leased_at = Instant::now();
                        let mut stopped = std::collections::HashSet::new();
                        let mut kept = Vec::with_capacity(claims.len());
                        for outcome in renewed {
                            match outcome {
                                RenewOutcome::Renewed(c) => {
                                    let key = c.entry.partition_key.as_ref();
                                    if key.is_none_or(|k| !stopped.contains(k)) {
                                        kept.push(c);
                                    }
                                }
                                RenewOutcome::Lost(lost) => {
                                    stopped.extend(lost.entry.partition_key);
                                }
                            }
                        }
                        claims = kept;
                        continue;
                    }
                    let claim = claims.remove(0);
                    let (key, position) = sequence[&claim.id()];
                    log.lock()
                        .expect("the log's lock")
                        .push((key, position, claim.id()));
                    if emissions.fetch_add(1, Ordering::SeqCst) % config.slow_every
                        == config.slow_every - 1
                    {
                        tokio::time::sleep(config.slow).await;
                    }
                    emitted.push(claim);
                }
                let claims = emitted;
                let reqs = claims
                    .iter()
                    .map(|c| {
                        CompletionRequest::new(
                            c.clone(),
                            Completion::Delivered(EmissionResult::new()),
                        )
                    })
                    .collect();
                let results = store.complete_batch(reqs).await.expect("complete");
                let applied = results.iter().filter(|r| r.is_applied()).count();
                delivered.fetch_add(applied, Ordering::SeqCst);
            }
        }));
    }
    for worker in workers {
        worker.await.expect("a worker panicked");
    }
    let log = log.lock().expect("the log's lock").clone();
    check_order(&log, config.keys);
    let mut seen: HashMap<EntryId, usize> = HashMap::new();
    for (_, _, id) in &log {
        *seen.entry(*id).or_default() += 1;
    }
    assert_eq!(seen.len(), config.entries, "entries never emitted");
    let delivered = delivered.load(Ordering::SeqCst);
    assert_eq!(delivered, config.entries, "deliveries applied");
    OrderedRaceReport {
        delivered,
        emissions: log.len(),
        repeated: log.len() - seen.len(),
    }
}

/// Panics unless, for every key, no entry was emitted before every earlier entry of its
/// key had been emitted: no overtake. Repeats are at-least-once delivery: an entry (or a
/// run of them) emitted again after its lease ran out, in order again.
fn check_order(log: &[(usize, usize, EntryId)], keys: usize) {
    // Per key: how many of its first entries have all been emitted.
    let mut emitted_prefix = vec![0_usize; keys];
    let mut violations = Vec::new();
    for &(key, position, id) in log {
        let prefix = &mut emitted_prefix[key];
        if position > *prefix {
            violations.push(format!(
                "key {key}: entry {position} ({id}) emitted before entry {prefix}"
            ));
        } else if position == *prefix {
            *prefix += 1;
        }
    }
    assert!(
        violations.is_empty(),
        "{} emissions out of key order, first: {:?}",
        violations.len(),
        &violations[..violations.len().min(5)]
    );
}

/// Enqueues the race's entries; returns each id's key and position within its key.
async fn enqueue_keyed(
    store: &dyn ClaimStore,
    config: &OrderedRaceConfig,
) -> HashMap<EntryId, (usize, usize)> {
    let base = Utc::now() - TimeDelta::hours(1);
    let max = store.limits().max_batch_size as usize;
    let mut sequence = HashMap::with_capacity(config.entries);
    for first in (0..config.entries).step_by(max) {
        let batch: Vec<NewEntry> = (first..config.entries.min(first + max))
            .map(|i| {
                let micros = i64::try_from(i).expect("a small count");
                let entry = NewEntry::new("ordered-race", i.to_le_bytes().to_vec())
                    .partition_key(format!("key-{}", i % config.keys))
                    .created_at(base + TimeDelta::microseconds(micros));
                sequence.insert(entry.id, (i % config.keys, i / config.keys));
                entry
            })
            .collect();
        store.enqueue_batch(batch).await.expect("enqueue");
    }
    sequence
}

#[cfg(test)]
mod tests {
    use super::check_order;
    use outbox_core::EntryId;

    fn log(positions: &[usize]) -> Vec<(usize, usize, EntryId)> {
        positions.iter().map(|&p| (0, p, EntryId::new())).collect()
    }

    #[test]
    fn a_run_emitted_again_is_a_repeat_not_an_overtake() {
        check_order(&log(&[0, 1, 2, 0, 1, 2, 3]), 1);
    }

    #[test]
    #[should_panic(expected = "out of key order")]
    fn an_entry_before_its_predecessor_is_an_overtake() {
        check_order(&log(&[0, 2, 1]), 1);
    }
}
