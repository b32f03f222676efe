//! What a run measured, as plain data: written to `results.json` by `outbox-bench run` and
//! read back by `outbox-bench render`, so the report can be rebuilt without re-measuring.

mod soak;

use serde::{Deserialize, Serialize};
pub use soak::SoakRow;

/// A database engine the benches drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// An embedded SQLite file (WAL, `synchronous = NORMAL`).
    Sqlite,
    /// A PostgreSQL server.
    Postgres,
    /// A MariaDB server (the `outbox-mysql` store; `mariadb` in results and on the
    /// command line).
    #[serde(rename = "mariadb")]
    Mysql,
}

impl Engine {
    /// The engine's name in tables.
    pub fn label(self) -> &'static str {
        match self {
            Engine::Sqlite => "SQLite",
            Engine::Postgres => "PostgreSQL",
            Engine::Mysql => "MariaDB",
        }
    }

    /// True when a round trip can be slowed down by the latency proxy: PostgreSQL only,
    /// since the proxy reads the PostgreSQL protocol (MariaDB is measured direct, on
    /// loopback).
    pub fn has_network(self) -> bool {
        matches!(self, Engine::Postgres)
    }
}

/// Which store serves an engine: the per-row baseline or the engine's optimized crate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StorePath {
    /// `outbox_core::portable`: 1 + 2N commands per claim batch of N.
    Portable,
    /// `outbox-sqlite` / `outbox-postgres`: one statement per claim batch; `outbox-mysql`:
    /// one short transaction of a fixed number of statements.
    Optimized,
}

impl StorePath {
    /// The path's name in tables.
    pub fn label(self) -> &'static str {
        match self {
            StorePath::Portable => "portable",
            StorePath::Optimized => "optimized",
        }
    }
}

/// The machine and servers a run measured on.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Environment {
    /// `quick` (a smoke run) or `full` (the report).
    pub mode: String,
    /// When the run started (UTC, RFC 3339).
    pub started: String,
    /// Logical CPUs.
    pub cpus: usize,
    /// The CPU's model name.
    pub cpu_model: String,
    /// Total memory in GiB.
    pub memory_gib: f64,
    /// The kernel (`uname -sr`).
    pub kernel: String,
    /// The PostgreSQL server, when one was reached.
    pub postgres: Option<PgServerInfo>,
    /// The MariaDB server, when one was reached (absent from older runs).
    #[serde(default)]
    pub mariadb: Option<PgServerInfo>,
    /// The SQLite library version linked into the benches.
    pub sqlite_version: String,
    /// What could not run, and why (an unreachable engine, a missing tool).
    pub skipped: Vec<String>,
    /// Wall-clock seconds the whole run took.
    pub seconds: f64,
    /// What a `SELECT 1` round trip really took through the latency proxy at each
    /// nominal latency (the proxy's timer is coarse, so the two differ).
    #[serde(default)]
    pub proxy_round_trips: Vec<ProxyRoundTrip>,
    /// Scenarios measured again later into these results (`run --keep`), each with when
    /// and how long (absent from older runs).
    #[serde(default)]
    pub reruns: Vec<String>,
}

/// A measured round trip through the latency proxy.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ProxyRoundTrip {
    /// The latency the proxy was asked to add, milliseconds.
    pub latency_ms: u32,
    /// The median `SELECT 1` round trip through it, milliseconds.
    pub measured_ms: f64,
}

/// A database server a run used (PostgreSQL, or MariaDB).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PgServerInfo {
    /// `SELECT version()`.
    pub version: String,
    /// Where it was (password removed).
    pub url: String,
    /// Durability and memory settings that change the figures.
    pub settings: Vec<(String, String)>,
}

/// Scenario 1: one uncontended worker claiming batches (each completed, untimed, before the
/// next claim).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClaimRow {
    /// Engine.
    pub engine: Engine,
    /// Store.
    pub path: StorePath,
    /// Claim batch size.
    pub batch: u32,
    /// Added round-trip latency in milliseconds.
    pub latency_ms: u32,
    /// Rows claimed.
    pub claimed: u64,
    /// Claim calls made.
    pub calls: u64,
    /// Seconds spent inside claim calls.
    pub seconds: f64,
    /// Rows claimed per second of claim time.
    pub claims_per_s: f64,
    /// Median claim call, milliseconds.
    pub p50_ms: f64,
    /// 95th percentile claim call, milliseconds.
    pub p95_ms: f64,
}

/// What one claim batch costs in commands, counted outside the store.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CostRow {
    /// Engine.
    pub engine: Engine,
    /// Store.
    pub path: StorePath,
    /// Claim batch size (every batch came back full).
    pub batch: u32,
    /// Statements per claim batch (sqlx's statement log on SQLite; `Query`/`Execute`
    /// messages through the counting proxy on PostgreSQL).
    pub statements: f64,
    /// Round trips per claim batch (`Query`/`Sync` messages; PostgreSQL only).
    pub round_trips: Option<f64>,
    /// Statements per batch completion of the same claims.
    pub completion_statements: f64,
}

/// Scenario 2: several workers racing over one table.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RaceRow {
    /// Engine.
    pub engine: Engine,
    /// Store.
    pub path: StorePath,
    /// Claim batch size.
    pub batch: u32,
    /// Added round-trip latency in milliseconds.
    pub latency_ms: u32,
    /// Racing workers.
    pub workers: usize,
    /// Rows claimed (and completed).
    pub claimed: u64,
    /// Wall-clock seconds of the race.
    pub seconds: f64,
    /// Rows claimed per second, all workers together.
    pub claims_per_s: f64,
    /// Claim call latency percentiles, milliseconds.
    pub p50_ms: f64,
    /// 95th percentile.
    pub p95_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
    /// Rows handed to a worker while another worker's lease on them was live (must be 0).
    pub duplicate_live_leases: u64,
    /// Completions that did not apply although no lease could have expired (must be 0).
    pub lost_completions: u64,
    /// The longest an eligible row stayed unclaimed after a newer row had been claimed
    /// (how far the race strays from claim order), milliseconds.
    pub longest_overtaken_wait_ms: f64,
}

/// Scenario 3: the drain end to end (claim, no-op emit, complete), in a child process.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DrainRow {
    /// Engine.
    pub engine: Engine,
    /// Store.
    pub path: StorePath,
    /// Drain workers.
    pub workers: usize,
    /// Claim batch size.
    pub batch: u32,
    /// Added round-trip latency in milliseconds.
    pub latency_ms: u32,
    /// Pending entries when the drain started.
    pub backlog: u64,
    /// What the run measured.
    pub outcome: DrainOutcome,
}

/// One measured drain run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct DrainOutcome {
    /// Entries delivered (applied delivered transitions).
    pub delivered: u64,
    /// Wall-clock seconds from the first cycle to the drain's return.
    pub seconds: f64,
    /// Entries delivered per second.
    pub entries_per_s: f64,
    /// The child process's peak resident set, MiB.
    pub peak_rss_mib: f64,
    /// The drain process's CPU time per delivered entry over the run, microseconds
    /// (absent from older runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_us_per_entry: Option<f64>,
    /// The database server's CPU time per delivered entry over the run, microseconds:
    /// every process of a PostgreSQL cluster, or MariaDB's one process, read from `/proc`.
    /// Absent for SQLite (it works inside the drain process), for a server on another
    /// machine, and from older runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpu_us_per_entry: Option<f64>,
    /// The emitter's mean emission time as measured, milliseconds, where it takes time:
    /// a timer sleeps at least what it is asked, often a little more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_emission_ms: Option<f64>,
    /// The rows the run left delivered in the table (delivered rows after it less those
    /// before it), counted by the parent process (MariaDB only): every delivery the drain
    /// counted must be there, once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_delivered: Option<u64>,
}

/// Scenario 4: enqueue throughput.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EnqueueRow {
    /// Engine.
    pub engine: Engine,
    /// Store.
    pub path: StorePath,
    /// Entries per host transaction (1) or per bulk call (1,000).
    pub per_call: u32,
    /// Entries written.
    pub entries: u64,
    /// Seconds.
    pub seconds: f64,
    /// Entries per second.
    pub entries_per_s: f64,
    /// Payload bytes of each entry (0 in runs that did not record it: the plan's size).
    #[serde(default)]
    pub payload_bytes: u32,
}

/// Scenario 4's baseline: the rows the optimized bulk enqueue wrote, loaded by the
/// engine's own bulk loader (PostgreSQL: `psql \copy` from a CSV file) into a fresh table.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CopyRow {
    /// Engine.
    pub engine: Engine,
    /// How the rows were loaded.
    pub method: String,
    /// Rows loaded.
    pub entries: u64,
    /// Payload bytes of every row.
    pub payload_bytes: u32,
    /// Seconds the loader ran (writing the file not included).
    pub seconds: f64,
    /// Rows per second.
    pub entries_per_s: f64,
}

/// Scenario 5: the raw-SQL ceiling beside the library's drain on the same backlog.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CeilingRow {
    /// Engine.
    pub engine: Engine,
    /// How the ceiling was driven (pgbench script, or a tight loop on one connection).
    pub method: String,
    /// Pending rows at the start (never analyzed).
    pub backlog: u64,
    /// Claim batch size.
    pub batch: u32,
    /// Concurrent clients (pgbench) or workers (drain).
    pub clients: usize,
    /// Rows claimed and completed per second by raw SQL.
    pub raw_rows_per_s: f64,
    /// The same loop through the store's driver (sqlx) on one connection, rows per second:
    /// SQLite only (MariaDB's raw loop is on sqlx already), absent in runs that did not
    /// measure it.
    #[serde(default)]
    pub driver_rows_per_s: Option<f64>,
    /// The same loop as the store's own calls (claim, then complete) with no drain around
    /// them, rows per second: SQLite and MariaDB, absent in runs that did not measure it.
    #[serde(default)]
    pub store_rows_per_s: Option<f64>,
    /// The raw loop's client CPU time per row, microseconds: the bench process's and its
    /// ended children's over the loop, that is `pgbench`'s (and the bench waiting on it) on
    /// PostgreSQL, and the bench's own, which runs the loop, on SQLite and MariaDB. Absent
    /// from older runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_cpu_us_per_entry: Option<f64>,
    /// The server's CPU time per row during the raw loop, microseconds (PostgreSQL and
    /// MariaDB on this machine; see [`DrainOutcome::server_cpu_us_per_entry`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_server_cpu_us_per_entry: Option<f64>,
    /// Rows the raw loop delivered (MariaDB: it must clear the whole backlog).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_delivered: Option<u64>,
    /// The optimized store's drain on an identical backlog.
    pub drain: DrainOutcome,
    /// Payload bytes of every entry (0 in runs that did not record it: the plan's size).
    #[serde(default)]
    pub payload_bytes: u32,
    /// Drain ÷ raw of every round, in the order run; the row's own figures (rates and CPU)
    /// are those of the round of median ratio. Empty in runs made before rounds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub round_ratios: Vec<f64>,
    /// The other rounds, whole, in the order run, so the bench's invariants judge every
    /// drain and raw loop that ran, not only the one the report shows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_rounds: Vec<CeilingRow>,
}

impl CeilingRow {
    /// The round of median drain ÷ raw (the lower of the two middle ones for an even
    /// count) among `rounds`, each a whole row measured in one round, carrying every
    /// round's ratio in the order run; `None` without rounds. A round whose raw loop
    /// measured nothing ranks as a ratio of zero.
    pub fn of_rounds(rounds: Vec<CeilingRow>) -> Option<CeilingRow> {
        let ratio = |c: &CeilingRow| {
            if c.raw_rows_per_s > 0.0 {
                c.drain.entries_per_s / c.raw_rows_per_s
            } else {
                0.0
            }
        };
        let ratios: Vec<f64> = rounds.iter().map(ratio).collect();
        let (mut row, others) = median_round(rounds, ratio)?;
        row.round_ratios = ratios;
        row.other_rounds = others;
        Some(row)
    }
}

/// Scale scenarios: the optimized drain's rate as the table's contents grow.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScaleRow {
    /// Engine.
    pub engine: Engine,
    /// Short name of the case (`pending-10k`, `history-1m`, …).
    pub case: String,
    /// What the table held.
    pub description: String,
    /// Pending rows at the start.
    pub pending: u64,
    /// The drain's measurement over the first rows it delivered.
    pub drain: DrainOutcome,
    /// The store's statements in a bare loop on one connection over an identical table,
    /// rows per second: SQLite and MariaDB, absent in runs that did not measure it.
    #[serde(default)]
    pub raw_rows_per_s: Option<f64>,
}

/// One drain measured twice on identical backlogs: one batch at a time, and claiming the
/// next batch while the current one is emitted and recorded.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OverlapRow {
    /// Engine.
    pub engine: Engine,
    /// Drain workers.
    pub workers: usize,
    /// Claim batch size.
    pub batch: u32,
    /// Added round-trip latency, milliseconds.
    pub latency_ms: u32,
    /// Pending rows at the start of each run.
    pub backlog: u64,
    /// With `claim_ahead(false)`.
    pub one_at_a_time: DrainOutcome,
    /// With `claim_ahead(true)` and `batches_ahead(1)` (absent from older runs).
    #[serde(default)]
    pub one_ahead: Option<DrainOutcome>,
    /// With `claim_ahead(true)` at the default depth (where the store overlaps writes,
    /// two batches ahead).
    pub ahead: DrainOutcome,
}

/// One PostgreSQL drain measured in each statement mode on identical backlogs: named and
/// unnamed on a direct connection, and unnamed through a transaction-mode PgBouncer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StatementRow {
    /// Drain workers.
    pub workers: usize,
    /// Claim batch size.
    pub batch: u32,
    /// Pending rows at the start of each run.
    pub backlog: u64,
    /// Server connections the pooler kept.
    pub server_connections: u32,
    /// Named statements (the default), direct.
    pub named: DrainOutcome,
    /// Unnamed statements, direct.
    pub unnamed: DrainOutcome,
    /// Unnamed statements through PgBouncer; absent when it could not be started.
    pub pooled: Option<DrainOutcome>,
}

/// One cell of the flow scenario: one worker against an emitter that takes its time.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FlowRow {
    /// Engine.
    pub engine: Engine,
    /// Emissions in flight at most (`DrainOptions::emit_concurrency`).
    pub concurrency: usize,
    /// Claim batch size.
    pub batch: u32,
    /// The emission time, as a label (`5 ms`, `5 ms, 1 in 100 at 200 ms`).
    pub emission: String,
    /// The mean emission time, milliseconds.
    pub mean_emission_ms: f64,
    /// Concurrency ÷ the nominal mean emission time.
    pub ideal_per_s: f64,
    /// Pending rows at the start.
    pub backlog: u64,
    /// What the drain did.
    pub outcome: DrainOutcome,
}

/// One cell of the brokers scenario: the drain into one emitter.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BrokerRow {
    /// Engine.
    pub engine: Engine,
    /// `noop`, `NATS JetStream` or `RabbitMQ`.
    pub emitter: String,
    /// Claim batch size.
    pub batch: u32,
    /// Emissions in flight at most.
    pub concurrency: usize,
    /// Pending rows at the start.
    pub backlog: u64,
    /// What the drain did.
    pub outcome: DrainOutcome,
}

/// A broker's publish rate with no outbox in front of it: the project's emitter called
/// directly, or the client library with no emitter around it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BrokerCeilingRow {
    /// `NATS JetStream` or `RabbitMQ`.
    pub broker: String,
    /// `emitter` (the project's emitter, no outbox) or `client` (the client library alone).
    pub publisher: String,
    /// Publishes awaiting their acknowledgement at most.
    pub in_flight: usize,
    /// Messages published and acknowledged.
    pub messages: u64,
    /// Payload bytes per message.
    pub payload_bytes: u32,
    /// Acknowledged messages per second.
    pub per_s: f64,
}

impl FlowRow {
    /// Concurrency ÷ the mean emission time the emitter really took: the rate with every
    /// slot always busy.
    pub fn measured_ideal_per_s(&self) -> Option<f64> {
        #[allow(clippy::cast_precision_loss)] // A concurrency of a few dozen.
        let slots = self.concurrency as f64;
        self.outcome
            .mean_emission_ms
            .filter(|ms| *ms > 0.0)
            .map(|ms| slots * 1_000.0 / ms)
    }
}

/// Everything one run measured.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Results {
    /// Machine, servers, mode, skips.
    pub environment: Environment,
    /// Scenario 1.
    pub claims: Vec<ClaimRow>,
    /// Commands per batch.
    pub costs: Vec<CostRow>,
    /// Scenario 2.
    pub races: Vec<RaceRow>,
    /// Scenario 3.
    pub drains: Vec<DrainRow>,
    /// Scenario 4.
    pub enqueues: Vec<EnqueueRow>,
    /// Scenario 4's bulk-loader baseline (absent from older runs).
    #[serde(default)]
    pub copies: Vec<CopyRow>,
    /// Scenario 5.
    pub ceilings: Vec<CeilingRow>,
    /// Scale scenarios.
    pub scale: Vec<ScaleRow>,
    /// Claiming ahead against one batch at a time (absent from older runs).
    #[serde(default)]
    pub overlap: Vec<OverlapRow>,
    /// The drain against a slow emitter (absent from older runs).
    #[serde(default)]
    pub flow: Vec<FlowRow>,
    /// The drain into real brokers beside noop (absent from older runs).
    #[serde(default)]
    pub brokers: Vec<BrokerRow>,
    /// The brokers with no outbox in front of them (absent from older runs).
    #[serde(default)]
    pub broker_ceilings: Vec<BrokerCeilingRow>,
    /// The drain's rounds with and without a snapshot held elsewhere (absent from older
    /// runs).
    #[serde(default)]
    pub held: Vec<HeldRow>,
    /// Soak runs: churn for a fixed time (absent from older runs).
    #[serde(default)]
    pub soak: Vec<SoakRow>,
    /// The drain of a keyed backlog, unordered and in key order (absent from older runs).
    #[serde(default)]
    pub ordered: Vec<OrderedRow>,
    /// PostgreSQL's statement modes, direct and through a pooler (absent from older runs).
    #[serde(default)]
    pub statements: Vec<StatementRow>,
    /// What `outbox stats` costs, live and exact, with and without history (absent from
    /// older runs).
    #[serde(default)]
    pub reading: Vec<ReadingRow>,
}

/// `outbox stats` on one table: the live stats and the full count, each the median of
/// calls made one at a time on one connection.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReadingRow {
    /// Engine.
    pub engine: Engine,
    /// Pending entries in the table (all of what is live).
    pub live: u64,
    /// Delivered entries behind them (the history).
    pub delivered: u64,
    /// The live stats, median milliseconds.
    pub live_ms: f64,
    /// The full count (`--exact`), median milliseconds.
    pub exact_ms: f64,
    /// Delivered as the live stats gave it.
    pub delivered_read: u64,
    /// Whether the live stats said it was an estimate.
    pub delivered_estimated: bool,
    /// Delivered as the full count gave it.
    pub delivered_exact: u64,
}

impl Results {
    /// Whether `scenario` measures PostgreSQL through the latency proxy (its cells run at
    /// every added latency of the plan).
    pub fn through_proxy(scenario: &str) -> bool {
        matches!(scenario, "claims" | "races" | "drains" | "overlap")
    }

    /// Moves `scenario`'s rows from `newer` into these results, replacing what they held,
    /// and notes the rerun (with `newer`'s skips) in the environment.
    pub fn take_scenario(&mut self, newer: &mut Results, scenario: &str) {
        use std::mem::take;
        match scenario {
            "claims" => self.claims = take(&mut newer.claims),
            "races" => self.races = take(&mut newer.races),
            "drains" => self.drains = take(&mut newer.drains),
            "overlap" => self.overlap = take(&mut newer.overlap),
            "flow" => self.flow = take(&mut newer.flow),
            "brokers" => {
                self.brokers = take(&mut newer.brokers);
                self.broker_ceilings = take(&mut newer.broker_ceilings);
            }
            "enqueue" => {
                self.enqueues = take(&mut newer.enqueues);
                self.copies = take(&mut newer.copies);
            }
            "ceiling" => self.ceilings = take(&mut newer.ceilings),
            "scale" => self.scale = take(&mut newer.scale),
            "held" => self.held = take(&mut newer.held),
            "soak" => self.soak = take(&mut newer.soak),
            "ordered" => self.ordered = take(&mut newer.ordered),
            "statements" => self.statements = take(&mut newer.statements),
            "costs" => self.costs = take(&mut newer.costs),
            "reading" => self.reading = take(&mut newer.reading),
            other => panic!("no scenario {other:?}"),
        }
        let e = &newer.environment;
        let server = e.postgres.as_ref().map_or_else(String::new, |pg| {
            let set: Vec<String> = pg
                .settings
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect();
            format!(", PostgreSQL with {}", set.join(", "))
        });
        let server = match &e.mariadb {
            Some(m) => format!("{server}, {}", m.version),
            None => server,
        };
        // Only the latest run of each scenario is worth a line: each line starts with
        // its scenario's prefix, and a rerun's lines replace the earlier ones.
        let (line, skip) = (format!("{scenario}: "), format!("{scenario} rerun: "));
        let env = &mut self.environment;
        env.reruns.retain(|l| !l.starts_with(&line));
        env.skipped.retain(|l| !l.starts_with(&skip));
        env.reruns.push(format!(
            "{line}measured again from {} ({} mode, {:.0} s run{server})",
            e.started, e.mode, e.seconds
        ));
        env.skipped
            .extend(e.skipped.iter().map(|s| format!("{skip}{s}")));
    }
}

/// One drain of a keyed backlog, unordered or in key order.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OrderedRow {
    /// Engine.
    pub engine: Engine,
    /// Partition keys the backlog is spread over.
    pub keys: u64,
    /// Drained in key order.
    pub ordered: bool,
    /// Drain workers.
    pub workers: usize,
    /// Claim batch size.
    pub batch: u32,
    /// Pending rows at the start.
    pub backlog: u64,
    /// What the drain did in its median round (by rate).
    pub outcome: DrainOutcome,
    /// Every round's rate, entries per second, in the order run (round `i` of the
    /// unordered row was run next to round `i` of the ordered one); empty in results
    /// written before cells had rounds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rounds_per_s: Vec<f64>,
    /// What the drain did in the other rounds, in the order run, so the bench's
    /// invariants judge every drain that ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_rounds: Vec<DrainOutcome>,
}

impl OrderedRow {
    /// This ordered drain's rate ÷ the unordered drain's on the same keys and engine: the
    /// median of the rounds' ratios, each round against the unordered round run next to
    /// it, so a drift of the machine over the cell cancels; the median rounds' ratio when
    /// the rows have no rounds to pair.
    pub fn cost_of_order(&self, all: &[OrderedRow]) -> Option<f64> {
        let unordered = all
            .iter()
            .find(|u| !u.ordered && u.engine == self.engine && u.keys == self.keys)?;
        if !self.ordered {
            return None;
        }
        let paired = self.rounds_per_s.len() == unordered.rounds_per_s.len();
        if paired && !self.rounds_per_s.is_empty() {
            let ratios: Vec<f64> = self
                .rounds_per_s
                .iter()
                .zip(&unordered.rounds_per_s)
                .filter(|(_, u)| **u > 0.0)
                .map(|(o, u)| o / u)
                .collect();
            return median(&ratios);
        }
        (unordered.outcome.entries_per_s > 0.0)
            .then(|| self.outcome.entries_per_s / unordered.outcome.entries_per_s)
    }
}

/// Back-to-back drain rounds on one table for a fixed time, with or without a
/// transaction held open on another connection all along.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HeldRow {
    /// Engine.
    pub engine: Engine,
    /// The peer queue measured instead of this outbox (name and version), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
    /// Whether a repeatable-read transaction was held open from the start.
    pub held: bool,
    /// Seconds the rounds ran (the snapshot was held at least this long).
    pub seconds: f64,
    /// Entries per round, loaded fresh before each.
    pub round_entries: u64,
    /// Each round's drain rate, entries per second, in order.
    pub rounds_per_s: Vec<f64>,
    /// Dead row versions in the table at the end, as `outbox stats` reports them.
    pub dead_rows: Option<u64>,
}

impl HeldRow {
    /// The median rate of the first tenth of the rounds (one round at least).
    pub fn first_tenth(&self) -> Option<f64> {
        median(&self.rounds_per_s[..self.tenth()])
    }

    /// The median rate of the last tenth of the rounds (one round at least).
    pub fn last_tenth(&self) -> Option<f64> {
        median(&self.rounds_per_s[self.rounds_per_s.len() - self.tenth()..])
    }

    /// The last tenth's median ÷ the first tenth's.
    pub fn last_over_first(&self) -> Option<f64> {
        match (self.first_tenth(), self.last_tenth()) {
            (Some(first), Some(last)) if first > 0.0 => Some(last / first),
            _ => None,
        }
    }

    fn tenth(&self) -> usize {
        let n = self.rounds_per_s.len();
        n.div_ceil(10).min(n)
    }
}

/// The round of median `figure` among `rounds` (the lower of the two middle ones for an
/// even count), and the others in the order run; `None` without rounds.
pub fn median_round<T>(mut rounds: Vec<T>, figure: impl Fn(&T) -> f64) -> Option<(T, Vec<T>)> {
    let figures: Vec<f64> = rounds.iter().map(figure).collect();
    let mut order: Vec<usize> = (0..rounds.len()).collect();
    order.sort_by(|&a, &b| figures[a].total_cmp(&figures[b]));
    let middle = *order.get((order.len().max(1) - 1) / 2)?;
    let kept = rounds.remove(middle);
    Some((kept, rounds))
}

/// The median of `xs`; `None` when empty.
fn median(xs: &[f64]) -> Option<f64> {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => None,
        n if n % 2 == 1 => Some(v[n / 2]),
        n => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cost_of_order_is_the_median_of_the_paired_rounds() {
        let row = |ordered: bool, rounds: Vec<f64>, median: f64| OrderedRow {
            engine: Engine::Sqlite,
            keys: 10,
            ordered,
            workers: 2,
            batch: 100,
            backlog: 24,
            outcome: DrainOutcome {
                entries_per_s: median,
                ..DrainOutcome::default()
            },
            rounds_per_s: rounds,
            other_rounds: Vec::new(),
        };
        // Each round against the one beside it: 0.6, 0.75 and 0.45, so 0.6; the median
        // rates alone (54 ÷ 100) would compare rounds run at different times.
        let unordered = row(false, vec![100.0, 40.0, 120.0], 100.0);
        let ordered = row(true, vec![60.0, 30.0, 54.0], 54.0);
        let all = vec![unordered.clone(), ordered.clone()];
        assert_eq!(ordered.cost_of_order(&all), Some(0.6));
        assert_eq!(unordered.cost_of_order(&all), None);
        // Rows without rounds (older results) compare their outcomes.
        let old = vec![row(false, vec![], 80.0), row(true, vec![], 20.0)];
        assert_eq!(old[1].cost_of_order(&old), Some(0.25));
    }

    #[test]
    fn a_ceiling_cell_keeps_its_round_of_median_ratio_with_every_ratio() {
        let round = |raw: f64, drain: f64, cpu: f64| CeilingRow {
            engine: Engine::Sqlite,
            method: "loop".into(),
            backlog: 1_000,
            batch: 100,
            clients: 1,
            raw_rows_per_s: raw,
            driver_rows_per_s: None,
            store_rows_per_s: None,
            raw_cpu_us_per_entry: Some(cpu),
            raw_server_cpu_us_per_entry: None,
            raw_delivered: None,
            drain: DrainOutcome {
                entries_per_s: drain,
                ..DrainOutcome::default()
            },
            payload_bytes: 64,
            round_ratios: Vec::new(),
            other_rounds: Vec::new(),
        };
        // Ratios 0.5, 0.9 and 0.75: the third round is the median, whole (its CPU too),
        // though neither its raw rate nor its drain rate is the median of its column.
        let kept = CeilingRow::of_rounds(vec![
            round(100.0, 50.0, 1.0),
            round(50.0, 45.0, 2.0),
            round(200.0, 150.0, 3.0),
        ])
        .expect("three rounds");
        assert_eq!(kept.raw_cpu_us_per_entry, Some(3.0));
        assert_eq!(kept.round_ratios, vec![0.5, 0.9, 0.75]);
        let others: Vec<_> = kept
            .other_rounds
            .iter()
            .map(|r| r.raw_cpu_us_per_entry)
            .collect();
        assert_eq!(others, vec![Some(1.0), Some(2.0)]);
        // An even count keeps the lower middle; a raw loop that measured nothing ranks
        // lowest instead of dividing by zero.
        let kept = CeilingRow::of_rounds(vec![round(0.0, 10.0, 1.0), round(10.0, 8.0, 2.0)])
            .expect("two rounds");
        assert_eq!(kept.raw_cpu_us_per_entry, Some(1.0));
        assert_eq!(kept.round_ratios, vec![0.0, 0.8]);
        assert!(CeilingRow::of_rounds(Vec::new()).is_none());
    }

    #[test]
    fn held_runs_compare_the_medians_of_their_first_and_last_tenths() {
        let row = |rounds: Vec<f64>| HeldRow {
            engine: Engine::Postgres,
            queue: None,
            held: true,
            seconds: 1.0,
            round_entries: 10,
            rounds_per_s: rounds,
            dead_rows: None,
        };
        // 20 rounds: tenths of 2; a lone slow round elsewhere does not count.
        let mut rounds: Vec<f64> = (0..20).map(|_| 100.0).collect();
        rounds[0] = 90.0;
        rounds[1] = 110.0;
        rounds[5] = 1.0;
        rounds[18] = 40.0;
        rounds[19] = 60.0;
        let r = row(rounds);
        assert_eq!(r.first_tenth(), Some(100.0));
        assert_eq!(r.last_tenth(), Some(50.0));
        assert_eq!(r.last_over_first(), Some(0.5));
        assert_eq!(row(vec![7.0]).last_over_first(), Some(1.0));
        assert_eq!(row(Vec::new()).last_over_first(), None);
    }

    #[test]
    fn a_scenario_measured_again_keeps_only_its_latest_line() {
        let mut base = Results::default();
        base.environment.reruns = vec!["soak: measured again from an old run".into()];
        for started in ["first", "second"] {
            let mut newer = Results::default();
            newer.environment.started = started.into();
            newer.environment.skipped = vec![format!("an engine, {started}")];
            base.take_scenario(&mut newer, "claims");
        }
        let lines = &base.environment.reruns;
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines[0].starts_with("soak: "), "{lines:?}");
        assert!(
            lines[1].starts_with("claims: measured again from second"),
            "{lines:?}"
        );
        let skipped = &base.environment.skipped;
        assert_eq!(
            skipped,
            &vec!["claims rerun: an engine, second".to_string()]
        );
    }
}
