//! For emitter tests against real brokers: entries to send, a drain run until nothing is
//! left to send, and the rows it left.

use std::sync::Arc;
use std::time::Duration;

use outbox_core::drain::{Drain, DrainOptions, DrainSummary, Emitter, RetryPolicy};
use outbox_core::{AdminClaimStore, EmissionStatus, NewEntry, OutboxEntry};

/// `n` entries of `topic`, each with headers and a payload of its own.
pub async fn enqueue(store: &dyn AdminClaimStore, topic: &str, n: usize) -> Vec<OutboxEntry> {
    let entries = (0..n)
        .map(|i| {
            NewEntry::new(topic, format!("{{\"n\":{i}}}").into_bytes())
                .header("content-type", "application/json")
                .header("x-seq", i.to_string())
        })
        .collect();
    store.enqueue_batch(entries).await.expect("enqueue")
}

/// Drains `store` into `emitter` until nothing is pending, retryable, deferred or
/// leased, retrying every 100 ms; fails the test after `limit`. A stats read that fails
/// (a server away mid-failover) only means "not yet".
pub async fn drain_all(
    store: Arc<dyn AdminClaimStore>,
    emitter: Arc<dyn Emitter>,
    limit: Duration,
) -> DrainSummary {
    let options = DrainOptions::new()
        .owner("emitter-test")
        .batch_size(50)
        .emit_concurrency(16)
        .poll_interval(Duration::from_millis(10), Duration::from_millis(50))
        .retry(RetryPolicy {
            initial: Duration::from_millis(100),
            multiplier: 1.0,
            max: Duration::from_millis(100),
            jitter: 0.0,
        })
        .max_attempts(1_000)
        .route_backoff(quick_route_backoff());
    let claims: Arc<dyn outbox_core::ClaimStore> = store.clone();
    let drain = Drain::new(claims, emitter, options).expect("drain");
    let done = || {
        let store = store.clone();
        async move {
            store
                .stats(&outbox_core::StatsRequest::new())
                .await
                .is_ok_and(|s| nothing_left(&s))
        }
    };
    tokio::time::timeout(limit, drain.run_until(done, std::future::pending::<()>()))
        .await
        .unwrap_or_else(|_| panic!("the drain did not finish within {limit:?}"))
}

/// A route backoff for tests: 50 ms, doubling, at most 500 ms.
fn quick_route_backoff() -> RetryPolicy {
    RetryPolicy {
        initial: Duration::from_millis(50),
        multiplier: 2.0,
        max: Duration::from_millis(500),
        jitter: 0.1,
    }
}

/// `n` entries of `topic` over `keys` partition keys (`k0`, `k1`, ...), in turn; each
/// carries its key as `x-key` and its place among its key's entries as `x-seq`.
pub async fn enqueue_keyed(
    store: &dyn AdminClaimStore,
    topic: &str,
    n: usize,
    keys: usize,
) -> Vec<OutboxEntry> {
    let entries: Vec<NewEntry> = (0..n)
        .map(|i| {
            let key = format!("k{}", i % keys);
            NewEntry::new(topic, format!("{{\"n\":{i}}}").into_bytes())
                .partition_key(key.clone())
                .header("x-key", key)
                .header("x-seq", (i / keys).to_string())
        })
        .collect();
    let mut written = Vec::with_capacity(n);
    for chunk in entries.chunks(500) {
        written.extend(store.enqueue_batch(chunk.to_vec()).await.expect("enqueue"));
    }
    written
}

/// Asserts that the `(x-key, x-seq)` pairs of the messages a consumer got, in the order
/// it got them, keep each key's order: a key's first copy of each entry arrives after
/// the first copy of the one before it (copies sent again after that are at-least-once).
pub fn assert_in_key_order(received: &[(String, u64)]) {
    let mut next: std::collections::HashMap<&str, u64> = std::collections::HashMap::new();
    for (key, seq) in received {
        let expected = next.entry(key.as_str()).or_insert(0);
        if *seq < *expected {
            continue; // a copy of one already seen
        }
        assert_eq!(
            *seq, *expected,
            "key {key}: entry {seq} arrived before entry {expected}"
        );
        *expected += 1;
    }
}

/// Asserts that a consumer got each of `entries` once, each key's in order
/// ([`assert_in_key_order`] on the `x-key` and `x-seq` headers of [`enqueue_keyed`]), and
/// that each is recorded delivered at its first attempt (route failures count none).
/// `received`: each message's entry id and headers, in the order the consumer got them.
pub async fn assert_delivered_once_in_key_order(
    store: &dyn AdminClaimStore,
    entries: &[OutboxEntry],
    received: &[(String, &std::collections::BTreeMap<String, String>)],
) {
    let ids: std::collections::HashSet<&str> = received.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(
        (received.len(), ids.len()),
        (entries.len(), entries.len()),
        "each entry once"
    );
    let order: Vec<(String, u64)> = received
        .iter()
        .map(|(_, headers)| {
            let seq = headers["x-seq"].parse().expect("x-seq is a number");
            (headers["x-key"].clone(), seq)
        })
        .collect();
    assert_in_key_order(&order);
    for row in rows(store, entries).await {
        assert_eq!(
            (row.status, row.attempt_count),
            (EmissionStatus::Delivered, 1),
            "{row:?}"
        );
    }
}

/// Two ordered drains into `emitter` started before its destination exists: waits until
/// entries are held for the route (asserting none was dead-lettered), runs `create`
/// (which makes the destination), and lets the drains run until nothing is left to send.
/// Asserts that the route failures were seen and nothing was dead-lettered.
pub async fn drain_across_a_missing_destination(
    store: Arc<dyn AdminClaimStore>,
    emitter: Arc<dyn Emitter>,
    create: impl std::future::Future<Output = ()>,
) -> DrainSummary {
    let workers: Vec<_> = (1..=2)
        .map(|i| {
            let options = DrainOptions::new()
                .owner(format!("route-test-{i}"))
                .batch_size(50)
                .emit_concurrency(16)
                .ordered(true)
                .poll_interval(Duration::from_millis(10), Duration::from_millis(50))
                .route_backoff(quick_route_backoff());
            let claims: Arc<dyn outbox_core::ClaimStore> = store.clone();
            let drain = Drain::new(claims, emitter.clone(), options).expect("drain");
            let store = store.clone();
            tokio::spawn(async move {
                let done = || {
                    let store = store.clone();
                    async move {
                        store
                            .stats(&outbox_core::StatsRequest::new())
                            .await
                            .is_ok_and(|s| nothing_left(&s))
                    }
                };
                drain.run_until(done, std::future::pending::<()>()).await
            })
        })
        .collect();
    let held = async {
        loop {
            let stats = store
                .stats(&outbox_core::StatsRequest::new())
                .await
                .expect("stats");
            assert_eq!(
                stats.count(EmissionStatus::DeadLettered),
                0,
                "dead-lettered for a missing destination"
            );
            if stats.count(EmissionStatus::Deferred) > 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(30), held)
        .await
        .expect("entries held for the missing destination");
    // A while longer: the drains keep probing, and still dead-letter nothing.
    tokio::time::sleep(Duration::from_millis(700)).await;
    create.await;
    let mut total = DrainSummary::default();
    for worker in workers {
        let summary = tokio::time::timeout(Duration::from_secs(120), worker)
            .await
            .expect("the drains finish once the destination exists")
            .expect("a drain worker");
        total.add(&summary);
    }
    assert!(total.route_failures > 0, "{total:?}");
    assert_eq!(total.dead_lettered, 0, "{total:?}");
    total
}

/// Whether nothing is pending, retryable, deferred or leased in `store`: a drain's
/// `run_until` condition for "everything was sent". Stats are a read, so this works on a
/// store that cannot write (a full disk).
pub async fn nothing_left_to_send(store: &dyn AdminClaimStore) -> bool {
    nothing_left(
        &store
            .stats(&outbox_core::StatsRequest::new())
            .await
            .expect("stats"),
    )
}

/// Whether `stats` show nothing pending, retryable, deferred or leased.
pub fn nothing_left(stats: &outbox_core::OutboxStats) -> bool {
    let open = [
        EmissionStatus::Pending,
        EmissionStatus::RetryableFailure,
        EmissionStatus::Deferred,
    ];
    open.iter()
        .all(|s| stats.counts.get(s).copied().unwrap_or(0) == 0)
        && stats.claims_in_flight == 0
}

/// The durable rows of `entries`.
pub async fn rows(store: &dyn AdminClaimStore, entries: &[OutboxEntry]) -> Vec<OutboxEntry> {
    let mut rows = Vec::new();
    for e in entries {
        rows.push(store.get(e.id).await.expect("get").expect("the row"));
    }
    rows
}

/// Wraps an emitter and counts what it said: a test acts once some entries were
/// delivered, and shows a broker outage was seen (failures) rather than slept through.
pub struct Counting<E> {
    /// The emitter counted.
    pub inner: E,
    /// Emissions delivered.
    pub delivered: std::sync::atomic::AtomicU64,
    /// Emissions that were not delivered.
    pub failed: std::sync::atomic::AtomicU64,
}

impl<E> Counting<E> {
    /// Counts `inner`'s outcomes.
    pub fn new(inner: E) -> Self {
        Self {
            inner,
            delivered: Default::default(),
            failed: Default::default(),
        }
    }

    /// Emissions delivered so far.
    pub fn delivered(&self) -> u64 {
        self.delivered.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Emissions not delivered so far.
    pub fn failed(&self) -> u64 {
        self.failed.load(std::sync::atomic::Ordering::Relaxed)
    }
}

#[outbox_core::async_trait]
impl<E: Emitter> Emitter for Counting<E> {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    async fn emit(
        &self,
        emission: outbox_core::drain::Emission<'_>,
    ) -> outbox_core::drain::EmitOutcome {
        let outcome = self.inner.emit(emission).await;
        let counter = match outcome {
            outbox_core::drain::EmitOutcome::Delivered { .. } => &self.delivered,
            _ => &self.failed,
        };
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        outcome
    }
}

/// Delivers every entry after a short pause (so a fault finds emissions in flight) and
/// counts each entry's emissions: an entry emitted twice shows.
#[derive(Debug, Default)]
pub struct PerEntry(std::sync::Mutex<std::collections::HashMap<outbox_core::EntryId, u32>>);

impl PerEntry {
    /// Each entry emitted so far, with how many times.
    pub fn emissions(&self) -> std::collections::HashMap<outbox_core::EntryId, u32> {
        self.0.lock().expect("the counts' lock").clone()
    }
}

#[outbox_core::async_trait]
impl Emitter for PerEntry {
    async fn emit(
        &self,
        emission: outbox_core::drain::Emission<'_>,
    ) -> outbox_core::drain::EmitOutcome {
        tokio::time::sleep(Duration::from_millis(2)).await;
        *self
            .0
            .lock()
            .expect("the counts' lock")
            .entry(emission.entry.id)
            .or_default() += 1;
        outbox_core::drain::EmitOutcome::delivered()
    }
}

/// Drains `store` into `emitter` while `proxy` (between the emitter and its broker) cuts
/// every connection once 50 entries were delivered, for 1.5 s; asserts that the outage
/// was seen (emissions failed and were retried) and cost no entry its delivery.
#[cfg(feature = "proxy")]
pub async fn drain_through_outage<E: Emitter + 'static>(
    store: Arc<dyn AdminClaimStore>,
    emitter: Arc<Counting<E>>,
    proxy: &crate::tcp_proxy::TcpProxy,
) -> DrainSummary {
    let outage = proxy.outage_once(|| emitter.delivered() >= 50, Duration::from_millis(1_500));
    let (summary, ()) = tokio::join!(
        drain_all(store, emitter.clone(), Duration::from_secs(120)),
        outage
    );
    assert!(
        emitter.failed() > 0 && summary.retried + summary.route_failures > 0,
        "the outage was not seen: {summary:?}"
    );
    assert_eq!(summary.dead_lettered, 0, "{summary:?}");
    summary
}

/// Drains `store` into `emitter` with `proxy` cut (the broker away at start; cut here if
/// the caller did not already), restoring it after 1.5 s; asserts that emissions were held
/// for the route meanwhile (an unreachable broker) and none dead-lettered.
#[cfg(feature = "proxy")]
pub async fn drain_after_comeback(
    store: Arc<dyn AdminClaimStore>,
    emitter: Arc<dyn Emitter>,
    proxy: &crate::tcp_proxy::TcpProxy,
) -> DrainSummary {
    proxy.cut();
    let comeback = async {
        tokio::time::sleep(Duration::from_millis(1_500)).await;
        proxy.restore();
    };
    let (summary, ()) = tokio::join!(
        drain_all(store, emitter, Duration::from_secs(120)),
        comeback
    );
    assert!(
        summary.route_failures > 0,
        "a broker away at start is the route's fault, held: {summary:?}"
    );
    assert_eq!(summary.dead_lettered, 0, "{summary:?}");
    summary
}
