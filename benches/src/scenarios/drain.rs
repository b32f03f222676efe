//! Scenario 3: the drain end to end (claim, emit to a no-op emitter, complete), run in a
//! child process of its own so its peak resident memory is its own.
//!
//! The parent prepares the table and runs `outbox-bench drain-child SPEC`; the child opens
//! the store, runs the workers until it has delivered `stop_after` entries, the queue is
//! empty, or its budget ends, and prints one JSON [`DrainOutcome`] line.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use outbox_core::async_trait;
use outbox_core::drain::{Drain, DrainOptions, Emission, EmitOutcome, Emitter};
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use super::{progress, Ctx};
use crate::location::Location;
use crate::results::{DrainOutcome, DrainRow, Engine, StorePath};
use crate::stats::rate;
use crate::subject::{open, Link};

/// What a drain child runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DrainSpec {
    /// The table.
    pub location: Location,
    /// Which store.
    pub path: StorePath,
    /// Concurrent drain workers.
    pub workers: usize,
    /// Claim batch size.
    pub batch: u32,
    /// Added round-trip latency, milliseconds.
    pub latency_ms: u32,
    /// Stop once this many entries were emitted.
    pub stop_after: u64,
    /// Stop after this long whatever was done, milliseconds.
    pub budget_ms: u64,
    /// Claim the next batch while one is emitted and recorded; `None` leaves it to the
    /// drain's default (the store's capabilities).
    #[serde(default)]
    pub claim_ahead: Option<bool>,
    /// How many batches to hold claimed ahead; `None` leaves the drain's default.
    #[serde(default)]
    pub batches_ahead: Option<usize>,
    /// How long each emission takes; `None` delivers at once.
    #[serde(default)]
    pub emission: Option<EmissionTime>,
    /// Emissions in flight per worker; `None` leaves the drain's default.
    #[serde(default)]
    pub concurrency: Option<usize>,
    /// A broker to deliver to (`nats://…`, `amqp://…`); `None` delivers nowhere.
    #[serde(default)]
    pub emitter: Option<String>,
    /// Drain in per-key order.
    #[serde(default)]
    pub ordered: bool,
    /// PostgreSQL: send statements unnamed (`StatementMode::Unnamed`) instead of named.
    #[serde(default)]
    pub unnamed: bool,
    /// PostgreSQL: connect through this pooler (PgBouncer) instead of to the server.
    #[serde(default)]
    pub pooler: Option<std::net::SocketAddr>,
}

impl DrainSpec {
    /// An optimized drain of `workers` workers at `batch` on `location`, with no added
    /// latency and the drain's defaults for everything else, stopping after `stop_after`
    /// entries or `budget`, whichever comes first.
    pub fn new(
        location: Location,
        workers: usize,
        batch: u32,
        stop_after: u64,
        budget: Duration,
    ) -> Self {
        Self {
            location,
            path: StorePath::Optimized,
            workers,
            batch,
            latency_ms: 0,
            stop_after,
            budget_ms: millis(budget),
            claim_ahead: None,
            batches_ahead: None,
            emission: None,
            concurrency: None,
            emitter: None,
            ordered: false,
            unnamed: false,
            pooler: None,
        }
    }
}

/// How long the bench's emitter takes per emission: `typical_ms` each, except every
/// `tail_every`-th emission (counted across the process), which takes `tail_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EmissionTime {
    /// The usual emission time, milliseconds.
    pub typical_ms: u32,
    /// The slow emission time, milliseconds.
    pub tail_ms: u32,
    /// One emission in this many is slow; 0 for none.
    pub tail_every: u32,
}

impl EmissionTime {
    /// Every emission takes `ms`.
    pub fn constant(ms: u32) -> Self {
        Self {
            typical_ms: ms,
            tail_ms: ms,
            tail_every: 0,
        }
    }

    /// The mean emission time, milliseconds.
    pub fn mean_ms(&self) -> f64 {
        if self.tail_every == 0 {
            return f64::from(self.typical_ms);
        }
        let n = f64::from(self.tail_every);
        (f64::from(self.typical_ms) * (n - 1.0) + f64::from(self.tail_ms)) / n
    }

    /// How long emission number `n` (from 1) takes.
    fn of(&self, n: u64) -> Duration {
        let slow = self.tail_every > 0 && n.is_multiple_of(u64::from(self.tail_every));
        Duration::from_millis(u64::from(if slow { self.tail_ms } else { self.typical_ms }))
    }

    /// `5 ms`, or `5 ms, 1 in 100 at 200 ms`.
    pub fn label(&self) -> String {
        if self.tail_every == 0 {
            format!("{} ms", self.typical_ms)
        } else {
            format!(
                "{} ms, 1 in {} at {} ms",
                self.typical_ms, self.tail_every, self.tail_ms
            )
        }
    }
}

/// Runs the drain grid: every worker count in every cell.
pub async fn run(ctx: &mut Ctx) {
    let plan = ctx.plan.clone();
    for cell in ctx.cells() {
        for &workers in &plan.drain_workers {
            // A little more than the drain will take, so it never runs dry.
            let backlog = plan.drain_entries + plan.drain_entries / 5;
            let Some(place) = ctx.loaded(cell.engine, backlog).await else {
                continue;
            };
            let spec = DrainSpec {
                path: cell.path,
                latency_ms: cell.latency_ms,
                ..DrainSpec::new(
                    place.location.clone(),
                    workers,
                    cell.batch,
                    plan.drain_entries,
                    plan.drain_budget,
                )
            };
            let outcome = measure(&spec).await;
            progress(format_args!(
                "drain {} {} {workers}w batch {} +{}ms: {:.0}/s, {:.1} MiB",
                cell.engine.label(),
                cell.path.label(),
                cell.batch,
                cell.latency_ms,
                outcome.entries_per_s,
                outcome.peak_rss_mib
            ));
            ctx.results.drains.push(DrainRow {
                engine: cell.engine,
                path: cell.path,
                workers,
                batch: cell.batch,
                latency_ms: cell.latency_ms,
                backlog,
                outcome,
            });
        }
    }
}

/// Whole milliseconds of `d`.
pub fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Runs `spec` in a child process and returns what it measured; on MariaDB, with the rows
/// the run left delivered in the table, counted here before and after.
pub async fn measure(spec: &DrainSpec) -> DrainOutcome {
    let mariadb = spec.location.engine == Engine::Mysql;
    let before = if mariadb {
        crate::mariadb::delivered_rows(&spec.location).await
    } else {
        0
    };
    let server = crate::cpu::ServerSpan::start(&spec.location).await;
    let exe = std::env::current_exe().expect("the bench binary's path");
    let out = tokio::process::Command::new(exe)
        .arg("drain-child")
        .arg(serde_json::to_string(spec).expect("spec as JSON"))
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .expect("run the drain child");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "drain child failed ({}): {}{}",
        out.status,
        stdout,
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout.lines().last().unwrap_or_default();
    let mut outcome: DrainOutcome =
        serde_json::from_str(line).unwrap_or_else(|e| panic!("drain child said {line:?}: {e}"));
    outcome.server_cpu_us_per_entry =
        server.and_then(|s| crate::cpu::per_entry_us(s.seconds()?, outcome.delivered));
    if mariadb {
        let after = crate::mariadb::delivered_rows(&spec.location).await;
        outcome.table_delivered = Some(after.saturating_sub(before));
    }
    outcome
}

/// Counts emissions and raises the stop signal at the limit; delivers everything, at once
/// or after the emission time it was given.
struct CountingEmitter {
    emitted: AtomicU64,
    finished: AtomicU64,
    stop_after: u64,
    stop: watch::Sender<bool>,
    time: Option<EmissionTime>,
    started: Instant,
    /// When the `stop_after`-th emission finished.
    reached: std::sync::OnceLock<Duration>,
    /// Time spent in emissions, microseconds, summed.
    busy_micros: AtomicU64,
    /// The broker emitter to hand each entry to, if any.
    inner: Option<Arc<dyn Emitter>>,
}

#[async_trait]
impl Emitter for CountingEmitter {
    async fn emit(&self, emission: Emission<'_>) -> EmitOutcome {
        let n = self.emitted.fetch_add(1, Ordering::Relaxed) + 1;
        let outcome = match &self.inner {
            Some(inner) => inner.emit(emission).await,
            None => EmitOutcome::delivered(),
        };
        if let Some(time) = self.time {
            let began = Instant::now();
            tokio::time::sleep(time.of(n)).await;
            let took = u64::try_from(began.elapsed().as_micros()).unwrap_or(u64::MAX);
            self.busy_micros.fetch_add(took, Ordering::Relaxed);
        }
        if self.finished.fetch_add(1, Ordering::Relaxed) + 1 >= self.stop_after {
            let _ = self.reached.set(self.started.elapsed());
            self.stop.send_replace(true);
        }
        outcome
    }
}

/// The child's side: runs the drain `spec` describes, in this process.
pub async fn child(spec: DrainSpec) -> DrainOutcome {
    // Per worker: a claim in flight for each batch held ahead (the default two), and a
    // recording beside the batch's own, as `DrainOptions::batches_ahead` asks of a pool.
    let connections = u32::try_from(spec.workers * 4).expect("worker count fits");
    let link = Link {
        statements: if spec.unnamed {
            outbox_postgres::StatementMode::Unnamed
        } else {
            outbox_postgres::StatementMode::Named
        },
        pooler: spec.pooler,
        ..Link::with_latency(spec.latency_ms)
    };
    let subject = open(&spec.location, spec.path, link, connections).await;
    let (stop, stopped) = watch::channel(false);
    // Connected before the clock starts: the run measures draining, not connecting.
    let inner = match &spec.emitter {
        Some(url) => Some(crate::brokers::emitter(url).await),
        None => None,
    };
    let started = Instant::now();
    let cpu_started = crate::cpu::own_seconds();
    let emitter = Arc::new(CountingEmitter {
        emitted: AtomicU64::new(0),
        finished: AtomicU64::new(0),
        started,
        reached: std::sync::OnceLock::new(),
        busy_micros: AtomicU64::new(0),
        inner,
        stop_after: spec.stop_after,
        stop: stop.clone(),
        time: spec.emission,
    });
    let budget = Duration::from_millis(spec.budget_ms);
    tokio::spawn(async move {
        tokio::time::sleep(budget).await;
        stop.send_replace(true);
    });
    let workers: Vec<_> = (0..spec.workers)
        .map(|w| {
            let mut options = DrainOptions::new()
                .owner(format!("bench-drain-{w}"))
                .batch_size(spec.batch)
                .poll_interval(Duration::from_millis(1), Duration::from_millis(10));
            if let Some(on) = spec.claim_ahead {
                options = options.claim_ahead(on);
            }
            if let Some(n) = spec.batches_ahead {
                options = options.batches_ahead(n);
            }
            if let Some(n) = spec.concurrency {
                options = options.emit_concurrency(n);
            }
            options = options.ordered(spec.ordered);
            let drain =
                Drain::new(subject.store.clone(), emitter.clone(), options).expect("drain options");
            let mut stopped = stopped.clone();
            tokio::spawn(async move {
                let shutdown = async move {
                    let _ = stopped.wait_for(|s| *s).await;
                };
                // A cycle that claims nothing means the queue is empty: nothing else writes.
                drain.run_until(|| std::future::ready(true), shutdown).await
            })
        })
        .collect();
    let mut delivered = 0;
    for w in workers {
        let summary = w.await.expect("drain worker");
        assert_eq!(summary.errors, 0, "a drain cycle failed: {summary:?}");
        delivered += summary.delivered;
    }
    let elapsed = started.elapsed();
    let cpu_seconds = crate::cpu::own_seconds()
        .zip(cpu_started)
        .map(|(now, then)| now - then);
    // Against a slow emitter, the last emissions of a short run (a 200 ms one, say) would
    // weigh on the rate as they never do in a long one: measure up to the emission that
    // reached the target instead: `stop_after` emissions finished by then, each recorded
    // within the drain's linger.
    let entries_per_s = match (spec.emission, emitter.reached.get()) {
        (Some(_), Some(&reached)) => rate(spec.stop_after, reached),
        _ => rate(delivered, elapsed),
    };
    let finished = emitter.finished.load(Ordering::Relaxed);
    #[allow(clippy::cast_precision_loss)] // Counts far below 2^52.
    let mean_emission_ms = (spec.emission.is_some() && finished > 0)
        .then(|| emitter.busy_micros.load(Ordering::Relaxed) as f64 / 1_000.0 / finished as f64);
    DrainOutcome {
        mean_emission_ms,
        delivered,
        seconds: elapsed.as_secs_f64(),
        entries_per_s,
        peak_rss_mib: peak_rss_mib(),
        cpu_us_per_entry: cpu_seconds.and_then(|s| crate::cpu::per_entry_us(s, delivered)),
        server_cpu_us_per_entry: None,
        table_delivered: None,
    }
}

/// This process's peak resident set (`VmHWM`), MiB; 0 where the kernel does not say.
fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        })
        .map_or(0.0, |kib| kib / 1024.0)
}
