//! The command line.

use chrono::TimeDelta;
use clap::{Args, Parser, Subcommand, ValueEnum};

use outbox_core::duration::parse as parse_duration;

/// Operate a transactional outbox: apply its schema, enqueue, drain, inspect.
#[derive(Debug, Parser)]
#[command(
    name = "outbox",
    version,
    about,
    after_help = "Environment:\n  OUTBOX_DATABASE_URL  the database, instead of --database-url\n  OUTBOX_LOG           log filter for standard error (e.g. info, outbox_core=debug; default warn)\n\nExit codes:\n  0    done\n  1    a runtime failure (database, emitter, files)\n  2    a usage error (a bad argument or value)\n  3    drain --until-empty --fail-on-dead-letters dead-lettered entries\n  4    drain --route-down-limit: a route stayed down past the limit\n  130  a second Ctrl-C or SIGTERM cut a graceful stop short"
)]
pub(crate) struct Cli {
    /// The database: sqlite://PATH, postgres://USER@HOST:PORT/DB,
    /// mysql://USER:PASSWORD@HOST:PORT/DB (or mariadb://…) or
    /// sqlserver://USER:PASSWORD@HOST:PORT/DB (or an ADO.NET string Server=…;Database=…)
    /// [env: OUTBOX_DATABASE_URL; default: sqlite://outbox.db].
    #[arg(long, global = true)]
    pub(crate) database_url: Option<String>,
    /// Which store to use: the engine's optimized one or the portable per-row one.
    #[arg(long, global = true, value_enum, default_value_t = StoreKind::Optimized)]
    pub(crate) store: StoreKind,
    /// The outbox table name.
    #[arg(long, global = true, default_value = "outbox")]
    pub(crate) table: String,
    /// The schema holding the table (PostgreSQL, SQL Server; the database on MariaDB /
    /// MySQL; the connection's default when unset).
    #[arg(long, global = true)]
    pub(crate) schema: Option<String>,
    /// Every store call on a database server (PostgreSQL, MariaDB / MySQL, SQL Server) fails past this
    /// deadline instead of waiting on a server that stopped answering; the drain backs
    /// off and tries again. Keep it under the lease.
    #[arg(long, global = true, default_value = "10s", value_parser = parse_call_timeout)]
    pub(crate) call_timeout: std::time::Duration,
    /// PostgreSQL: how statements are sent: named (prepared once per connection, the
    /// fastest on a direct connection) or unnamed (parsed on every call; what a
    /// transaction-mode pooler such as PgBouncer or RDS Proxy needs). Overrides the
    /// URL's statement_mode parameter.
    #[arg(long, global = true, value_enum)]
    pub(crate) statement_mode: Option<StatementModeArg>,
    /// PostgreSQL: where drains listen for wake-ups, when the database URL goes through a
    /// transaction-mode pooler (LISTEN needs a session of its own): a direct
    /// connection, or one through a session-mode pooler. The database URL by default.
    #[arg(long, global = true, conflicts_with = "no_listen")]
    pub(crate) listen_url: Option<String>,
    /// PostgreSQL: no listener: drains poll at their poll interval instead of being woken
    /// when entries are written.
    #[arg(long, global = true)]
    pub(crate) no_listen: bool,
    /// Connections the command's pool may open to a database server (PostgreSQL,
    /// MariaDB / MySQL, SQL Server). By default, what the command needs: for a drain,
    /// each worker's claims ahead and its batch's completion and renewal, plus the stats
    /// sampler; a drain whose pool is set smaller says so at start.
    #[arg(long, global = true, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub(crate) pool_size: Option<u32>,
    /// How log lines on standard error look: text for people, json (one object a line)
    /// for a log pipeline.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    pub(crate) log_format: LogFormat,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// How PostgreSQL statements are sent (`outbox_postgres::StatementMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum StatementModeArg {
    /// Prepared once per connection under a name, then reused.
    Named,
    /// Parsed, bound and run in one round trip under no name.
    Unnamed,
}

/// The shape of log lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// Which store implementation serves the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum StoreKind {
    /// The engine's set-based store (one round trip per claim batch).
    Optimized,
    /// The provider-neutral per-row store (1 + 2N commands per claim batch).
    Portable,
}

/// The database when neither `--database-url` nor `OUTBOX_DATABASE_URL` names one.
pub(crate) const DEFAULT_DATABASE_URL: &str = "sqlite://outbox.db";

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Apply the schema for the URL's engine, or print it.
    Migrate(MigrateArgs),
    /// Insert test entries.
    Enqueue(EnqueueArgs),
    /// Run drain workers until Ctrl-C / SIGTERM, or until the outbox is empty.
    Drain(DrainArgs),
    /// Counts by status, oldest pending age, leases in flight and expired; on PostgreSQL,
    /// dead rows and the oldest snapshot held elsewhere, with a warning past a threshold.
    /// What is live is counted exactly at the cost of what is live, whatever the history;
    /// the delivered count may be the engine's estimate (said so), and the claims made are
    /// left out, unless `--exact`.
    Stats(StatsArgs),
    /// One entry by id: status, times, attempts, last error, claim, headers, payload.
    Show {
        /// The entry's id.
        id: outbox_core::EntryId,
        /// One JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Inspect, requeue or delete dead-lettered entries.
    #[command(subcommand, name = "dead-letters")]
    DeadLetters(DeadLetterCommand),
    /// Entries in one status, one page at a time: oldest first, delivered entries newest
    /// delivery first.
    List(ListArgs),
    /// Serve the outbox to a browser: an overview with the last hour's chart, entries by
    /// status and topic, one entry's every field; /healthz and /metrics beside them.
    /// Read-only unless started with --allow-writes.
    Ui(UiArgs),
    /// Make failed or dead-lettered entries pending again with a fresh attempt budget.
    Requeue {
        /// Which status to requeue from: failed or dead_lettered.
        #[arg(long, value_parser = parse_requeue_status)]
        status: outbox_core::EmissionStatus,
        #[command(flatten)]
        which: Selection,
    },
    /// Delete failed or dead-lettered entries, in bounded batches.
    Purge {
        /// Which status to delete from: failed or dead_lettered.
        #[arg(long, value_parser = parse_requeue_status)]
        status: outbox_core::EmissionStatus,
        #[command(flatten)]
        which: Selection,
        /// Confirm the deletion (without it, say what would be deleted).
        #[arg(long)]
        yes: bool,
    },
    /// Delete delivered entries older than a cut-off, in bounded batches.
    Prune {
        /// Delete entries delivered longer ago than this (e.g. 7d).
        #[arg(long, value_parser = parse_duration)]
        delivered_older_than: TimeDelta,
        /// Say how many entries would be deleted, and delete nothing.
        #[arg(long)]
        dry_run: bool,
        /// Rows per delete statement.
        #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=1000))]
        batch: u32,
    },
    /// The main job: business rows and outbox entries in one SQLite transaction each,
    /// drained by several workers to a JSONL file, then the stats.
    Demo {
        /// Where to put the database and the JSONL file (a new temporary directory if unset).
        #[arg(long)]
        dir: Option<std::path::PathBuf>,
        /// How many orders to write.
        #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
        orders: u32,
        /// How many drain workers.
        #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=64))]
        workers: u32,
    },
}

#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    /// The status: pending, delivered, deferred, failed, retryable_failure, dead_lettered.
    #[arg(long, value_parser = parse_status)]
    pub(crate) status: outbox_core::EmissionStatus,
    /// Only this topic.
    #[arg(long)]
    pub(crate) topic: Option<String>,
    /// Only entries with this partition key.
    #[arg(long)]
    pub(crate) partition_key: Option<String>,
    /// Entries per page.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub(crate) limit: u32,
    /// The page after this id (the last id of the previous page).
    #[arg(long)]
    pub(crate) after: Option<outbox_core::EntryId>,
    /// One JSON array instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct UiArgs {
    /// Where to listen. An address other machines can reach needs --auth-token-file.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub(crate) listen: std::net::SocketAddr,
    /// A file whose first line is the token every request but /healthz must carry (basic
    /// auth with the token as password, or a bearer token); at least 16 characters.
    #[arg(long)]
    pub(crate) auth_token_file: Option<std::path::PathBuf>,
    /// How often the server samples the outbox for the chart and the gauges of /metrics.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub(crate) sample_interval: TimeDelta,
    /// Offer requeue and purge of failed and dead-lettered entries (one, or every one of
    /// a status) on the pages; every write is printed with who asked. Without it the
    /// pages only read and a write is refused.
    #[arg(long)]
    pub(crate) allow_writes: bool,
}

fn parse_header(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_owned(), value.to_owned()))
        }
        _ => Err(format!("{text:?} is not NAME=VALUE")),
    }
}

fn parse_status(text: &str) -> Result<outbox_core::EmissionStatus, String> {
    text.parse().map_err(|_| {
        let names: Vec<&str> = outbox_core::EmissionStatus::ALL
            .iter()
            .map(|s| s.as_str())
            .collect();
        format!("{text:?} is not a status (one of: {})", names.join(", "))
    })
}

fn parse_requeue_status(text: &str) -> Result<outbox_core::EmissionStatus, String> {
    match parse_status(text)? {
        s @ (outbox_core::EmissionStatus::Failed | outbox_core::EmissionStatus::DeadLettered) => {
            Ok(s)
        }
        _ => Err(format!(
            "{text:?} entries do not wait for an operator (use failed or dead_lettered)"
        )),
    }
}

#[derive(Debug, Args)]
pub(crate) struct MigrateArgs {
    /// Print the SQL instead of applying it.
    #[arg(long)]
    pub(crate) print: bool,
    /// Also prepare the table for `drain --ordered` (SQLite, PostgreSQL): the indexes
    /// claims in per-key order walk. They hold every entry without a key too, so every
    /// enqueue writes one more index entry; tables drained unordered do without them.
    /// SQL Server's schema has what ordered claims need; there it changes nothing.
    #[arg(long)]
    pub(crate) ordered: bool,
    /// Revert the migrations newer than VERSION instead, newest first, keeping the
    /// rows (a rollback of the schema, after the release that needs it is rolled
    /// back). 0 reverts everything and deletes the outbox. A migration that cannot be
    /// reverted is refused, with its reason, before anything changes.
    #[arg(long, value_name = "VERSION", conflicts_with_all = ["print", "ordered"])]
    pub(crate) down_to: Option<i64>,
}

#[derive(Debug, Args)]
pub(crate) struct StatsArgs {
    /// One JSON object instead of text.
    #[arg(long)]
    pub(crate) json: bool,
    /// Count every row, delivered history included (reads the whole table): the
    /// delivered count exact and the claims made summed.
    #[arg(long)]
    pub(crate) exact: bool,
    /// Warn (on standard error) when a snapshot held by another session has been open
    /// this long: it keeps dead rows from being removed, and claims slow down
    /// [default: 5m].
    #[arg(long, value_parser = parse_duration)]
    pub(crate) warn_snapshot_age: Option<TimeDelta>,
    /// Warn when the outbox table holds at least this many dead row versions
    /// [default: 100000].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) warn_dead_rows: Option<u64>,
    /// Warn when a claim walking the pending index from its beginning steps over at
    /// least this many entries of rows no longer pending [default: 100000].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) warn_dead_index_entries: Option<u64>,
}

#[derive(Debug, Args)]
pub(crate) struct EnqueueArgs {
    /// How many entries.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) count: u64,
    /// Their topic.
    #[arg(long, default_value = "outbox.test")]
    pub(crate) topic: String,
    /// The payload of every entry: text, or @PATH for a file's bytes. Without it, a JSON
    /// test payload of --payload-bytes carrying its sequence number.
    #[arg(long, conflicts_with = "payload_bytes")]
    pub(crate) payload: Option<String>,
    /// Test payload size in bytes.
    #[arg(long, default_value_t = 64)]
    pub(crate) payload_bytes: usize,
    /// A header of every entry, NAME=VALUE (repeat for more).
    #[arg(long = "header", value_parser = parse_header)]
    pub(crate) headers: Vec<(String, String)>,
    /// The partition key of every entry.
    #[arg(long)]
    pub(crate) partition_key: Option<String>,
    /// Entries per transaction.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub(crate) batch: u32,
}

#[derive(Debug, Args)]
pub(crate) struct DrainArgs {
    /// Owner name prefix (workers are OWNER-1, OWNER-2, …); host-pid-random by default.
    #[arg(long)]
    pub(crate) owner: Option<String>,
    /// Drain workers in this process.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub(crate) workers: u32,
    /// Entries claimed per cycle.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub(crate) batch: u32,
    /// Lease length (e.g. 30s).
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub(crate) lease: TimeDelta,
    /// Emissions in flight per worker.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub(crate) concurrency: u32,
    /// Batches each worker holds claimed ahead of the one it emits, where the engine takes
    /// concurrent writes (PostgreSQL, MariaDB, SQL Server); more hide more of a slow
    /// link's round trips, and hold more entries other drains cannot take.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=8))]
    pub(crate) batches_ahead: u32,
    /// Where entries go: stdout, jsonl:PATH, webhook:URL (signed as Standard Webhooks with
    /// the `whsec_…` secrets in OUTBOX_WEBHOOK_SECRETS, separated by spaces),
    /// `nats://HOST:PORT?subject=events.{topic}&stream=NAME&create_stream=true&ack_timeout=5s`,
    /// `amqp://USER:PASS@HOST:PORT/VHOST?exchange=events&declare_exchange=true&routing_key=…`,
    /// `kafka://HOST:PORT[,HOST:PORT]?topic=events.{topic}&ack_timeout=5s`
    /// (parameters optional), or noop. Required: noop marks every entry delivered without sending it anywhere, so
    /// it must be asked for by name.
    #[arg(long)]
    pub(crate) emitter: String,
    /// Serve Prometheus metrics at http://ADDR/metrics while draining (e.g. 127.0.0.1:9464):
    /// transitions, emissions, latencies, batch sizes, lost renewals, and the outbox's
    /// counts, oldest pending age and leases sampled every --stats-interval.
    #[arg(long)]
    pub(crate) metrics_addr: Option<std::net::SocketAddr>,
    /// How often the sampled gauges of --metrics-addr are refreshed.
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    pub(crate) stats_interval: TimeDelta,
    /// Simulated provider latency added to every emission (load tests, demos), e.g. 5ms.
    #[arg(long, value_parser = parse_duration)]
    pub(crate) emit_delay: Option<TimeDelta>,
    /// Dead-letter after this many attempts.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_attempts: u32,
    /// An entry older than this is dead-lettered the next time it is deferred or fails,
    /// instead of being tried again (e.g. 7d).
    #[arg(long, default_value = "7d", value_parser = parse_duration)]
    pub(crate) max_age: TimeDelta,
    /// How long one emission may run before it is abandoned and retried later (e.g. 60s).
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub(crate) emit_timeout: TimeDelta,
    /// On Ctrl-C or SIGTERM, how long running emissions may finish before they are
    /// abandoned and their claims released (e.g. 30s).
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub(crate) shutdown_grace: TimeDelta,
    /// Per-key order: the entries sharing a partition key oldest first, one claim of a key
    /// at a time across every drain started with --ordered; a key's entry that fails holds
    /// back the rest of its key until it is delivered or dead-lettered.
    #[arg(long)]
    pub(crate) ordered: bool,
    /// With --ordered: how many consecutive entries of one key a claim may take and emit
    /// one after the other (a key run; 1 takes one entry of a key at a time; at most
    /// --batch).
    #[arg(long, requires = "ordered", default_value_t = outbox_core::drain::DEFAULT_KEY_RUN,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) key_run: u32,
    /// With --ordered: dead-letter a key's entry at its first failure so the key moves on,
    /// instead of retrying it while the key waits.
    #[arg(long, requires = "ordered")]
    pub(crate) dead_letter_failing_heads: bool,
    /// Only the entries of slice INDEX of COUNT (e.g. 0/4): COUNT drains over the COUNT
    /// slices take every entry exactly once; an entry's slice is the FNV-1a hash of its
    /// partition key (of its id without one) modulo COUNT. With --until-empty, stops once
    /// the slice is drained.
    #[arg(long, value_parser = parse_slice)]
    pub(crate) slice: Option<outbox_core::Slice>,
    /// Stop once nothing is pending, retry-ready or under an unexpired lease (nor held by
    /// this drain for a failing route).
    #[arg(long)]
    pub(crate) until_empty: bool,
    /// Exit with code 4 once a route (a missing stream, topic or queue; refused
    /// credentials; an unreachable broker) has failed for longer than this, none of the
    /// entries held for it having got through since (e.g. 5m), instead of holding its
    /// entries and waiting for it. The entries stay held, no attempt counted, for the next drain.
    #[arg(long, value_parser = parse_duration)]
    pub(crate) route_down_limit: Option<TimeDelta>,
    /// How often the drain has the store judge the schema again (1s to 1d): a migration
    /// that contracts it past this release stops the drain with exit code 5 within this.
    #[arg(long, value_parser = parse_duration, default_value = "30s")]
    pub(crate) schema_check_interval: TimeDelta,
    /// With --until-empty: exit with code 3 when entries were dead-lettered during the run.
    #[arg(long, requires = "until_empty")]
    pub(crate) fail_on_dead_letters: bool,
    /// Print the closing summary as one JSON object (on standard error when entries go to
    /// standard output).
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Subcommand)]
pub(crate) enum DeadLetterCommand {
    /// List dead-lettered entries, most recent first.
    List {
        /// One JSON array instead of text.
        #[arg(long)]
        json: bool,
        /// At most this many.
        #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=1000))]
        limit: u32,
    },
    /// Make dead letters pending again with a fresh attempt budget.
    Requeue(Selection),
    /// Delete dead letters.
    Purge {
        #[command(flatten)]
        which: Selection,
        /// Confirm the deletion (without it, say what would be deleted).
        #[arg(long)]
        yes: bool,
    },
}

#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
pub(crate) struct Selection {
    /// One entry by id.
    #[arg(long)]
    pub(crate) id: Option<outbox_core::EntryId>,
    /// Every entry in the status (every dead letter).
    #[arg(long)]
    pub(crate) all: bool,
    /// Every entry in the status with this topic.
    #[arg(long)]
    pub(crate) topic: Option<String>,
}

impl Selection {
    /// The store's selection: one entry, one topic's, or every one.
    pub(crate) fn which(&self) -> outbox_core::DeadLetterSelection {
        match (self.id, &self.topic) {
            (Some(id), _) => outbox_core::DeadLetterSelection::One(id),
            (None, Some(topic)) => outbox_core::DeadLetterSelection::Topic(topic.clone()),
            (None, None) => outbox_core::DeadLetterSelection::All,
        }
    }
}

/// A slice, `INDEX/COUNT`.
fn parse_slice(text: &str) -> Result<outbox_core::Slice, String> {
    text.parse()
        .map_err(|e: outbox_core::OutboxError| e.to_string())
}

/// A call deadline: a duration of at most an hour.
fn parse_call_timeout(text: &str) -> Result<std::time::Duration, String> {
    let d = parse_duration(text)?
        .to_std()
        .map_err(|e| format!("{text:?}: {e}"))?;
    if d > outbox_core::MAX_CALL_TIMEOUT {
        return Err(format!("{text:?} is longer than the 1h maximum"));
    }
    Ok(d)
}
