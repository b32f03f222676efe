//! `outbox-bench`: runs the benches and writes the report.
//!
//! ```text
//! outbox-bench run --quick              # every scenario once, small: the CI smoke run
//! outbox-bench run --out benches        # the full run: benches/REPORT.md, results.json, plots
//! outbox-bench render --out benches     # the report again from benches/results.json
//! outbox-bench run --out benches --only soak --keep   # one scenario again, into the results
//! ```
//!
//! PostgreSQL is the server `OUTBOX_TEST_POSTGRES_URL` names, or a throwaway cluster from
//! the installed server binaries; with `OUTBOX_TEST_REQUIRE=postgres` an unreachable
//! server fails the run instead of being skipped.
//!
//! MariaDB is the server `OUTBOX_TEST_MYSQL_URL` names (by default root on
//! 127.0.0.1:3306), each bench table in a throwaway database of its own; with
//! `OUTBOX_TEST_REQUIRE=mariadb` an unreachable server fails the run.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Parser, Subcommand};
use outbox_benches::plan::Plan;
use outbox_benches::results::{Engine, Environment, ProxyRoundTrip, Results};
use outbox_benches::scenarios::{self, Ctx};
use outbox_benches::{mariadb, pg, report};

/// The command that regenerates the committed report.
const REPORT_COMMAND: &str = "scripts/bench-report.sh";

#[derive(Parser)]
#[command(
    name = "outbox-bench",
    about = "Benches of every outbox store, and the report"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Measures, then writes results.json, REPORT.md and the plots into --out.
    Run {
        /// Every scenario once at small sizes (seconds, not minutes).
        #[arg(long)]
        quick: bool,
        /// Where the results and the report go.
        #[arg(long, default_value = "target/bench")]
        out: PathBuf,
        /// Only these scenarios (claims, races, drains, overlap, flow, brokers, enqueue, ceiling, scale, held, soak, costs, ordered, statements, reading).
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        /// Only these engines (sqlite, postgres, mariadb); all by default.
        #[arg(long, value_delimiter = ',')]
        engines: Vec<String>,
        /// Exit non-zero when a correctness invariant failed (a duplicate live lease, a lost
        /// completion, a claim batch costing other than 1 or 1 + 2N statements, an entry
        /// the soak lost or emitted twice without a kill to explain it), judged on this run's
        /// figures only (not on those `--keep` carries over). With `OUTBOX_TEST_REQUIRE` set,
        /// as in CI, a part of the run that was skipped fails it too (a failure reported as
        /// a skip, a missing tool), unless its engine was left out by `--engines`.
        #[arg(long)]
        check: bool,
        /// Start from --out/results.json and replace only the scenarios run (with --only):
        /// one scenario measured again without rerunning the rest.
        #[arg(long)]
        keep: bool,
        /// The soak's length in minutes, instead of the plan's (an hour in the full run).
        #[arg(long)]
        soak_minutes: Option<u64>,
        /// How long each run of the held-snapshot scenario drains, in seconds, instead of
        /// the plan's (five minutes in the full run).
        #[arg(long)]
        held_seconds: Option<u64>,
    },
    /// Writes REPORT.md and the plots again from --out/results.json.
    Render {
        /// The directory holding results.json.
        #[arg(long, default_value = "benches")]
        out: PathBuf,
    },
    /// Internal: runs one soak drain process (a JSON spec) until it is killed.
    #[command(hide = true)]
    SoakWorker {
        /// The worker spec, as JSON.
        spec: String,
    },
    /// Internal: runs one drain measurement (a JSON spec) and prints its outcome.
    #[command(hide = true)]
    DrainChild {
        /// The drain spec, as JSON.
        spec: String,
    },
}

const SCENARIOS: [&str; 15] = [
    "claims",
    "races",
    "drains",
    "overlap",
    "flow",
    "brokers",
    "enqueue",
    "ceiling",
    "scale",
    "held",
    "soak",
    "costs",
    "ordered",
    "statements",
    "reading",
];

#[tokio::main]
async fn main() {
    match Cli::parse().command {
        Command::SoakWorker { spec } => {
            let spec = serde_json::from_str(&spec).expect("a soak worker spec");
            scenarios::soak::child::run(spec).await;
        }
        Command::DrainChild { spec } => {
            // OUTBOX_LOG=warn (say) shows what the drain logs, on standard error.
            if let Ok(filter) = tracing_subscriber::EnvFilter::try_from_env("OUTBOX_LOG") {
                tracing_subscriber::fmt()
                    .with_writer(std::io::stderr)
                    .with_env_filter(filter)
                    .init();
            }
            let spec = serde_json::from_str(&spec).expect("a drain spec");
            let outcome = scenarios::drain::child(spec).await;
            println!(
                "{}",
                serde_json::to_string(&outcome).expect("outcome as JSON")
            );
        }
        Command::Render { out } => {
            let text = std::fs::read_to_string(out.join("results.json")).unwrap_or_else(|e| {
                fail(&format!("cannot read {}/results.json: {e}", out.display()))
            });
            let results: Results = serde_json::from_str(&text)
                .unwrap_or_else(|e| fail(&format!("results.json does not parse: {e}")));
            write(&results, &out);
        }
        Command::Run {
            quick,
            out,
            only,
            engines,
            check,
            keep,
            soak_minutes,
            held_seconds,
        } => {
            if let Some(bad) = only.iter().find(|s| !SCENARIOS.contains(&s.as_str())) {
                fail(&format!(
                    "unknown scenario {bad:?} (expected some of: {})",
                    SCENARIOS.join(", ")
                ));
            }
            let mut plan = if quick { Plan::quick() } else { Plan::full() };
            if let Some(minutes) = soak_minutes {
                if minutes == 0 || minutes > 24 * 60 {
                    fail(&format!("--soak-minutes {minutes}: give 1 to 1440"));
                }
                plan.soak_duration = std::time::Duration::from_secs(minutes * 60);
            }
            if let Some(seconds) = held_seconds {
                if seconds == 0 || seconds > 24 * 3600 {
                    fail(&format!("--held-seconds {seconds}: give 1 to 86400"));
                }
                plan.held_duration = std::time::Duration::from_secs(seconds);
            }
            if keep && only.is_empty() {
                fail("--keep replaces the scenarios named by --only; name some");
            }
            let wants = |name: &str| engines.is_empty() || engines.iter().any(|e| e == name);
            if let Some(bad) = engines
                .iter()
                .find(|e| !["sqlite", "postgres", "mariadb"].contains(&e.as_str()))
            {
                fail(&format!(
                    "unknown engine {bad:?} (expected sqlite, postgres, mariadb)"
                ));
            }
            let selected = Selected {
                sqlite: wants("sqlite"),
                postgres: wants("postgres"),
                mariadb: wants("mariadb"),
            };
            let mut results = run(plan, &only, selected).await;
            // Judged on what this run measured, before older kept figures join it.
            let broken = check.then(|| {
                let mut broken = outbox_benches::invariants::broken(&results);
                if required_run() {
                    broken.extend(outbox_benches::invariants::skipped(&results));
                }
                broken
            });
            if keep {
                let path = out.join("results.json");
                let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
                    fail(&format!("--keep: cannot read {}: {e}", path.display()))
                });
                let mut kept: Results = serde_json::from_str(&text)
                    .unwrap_or_else(|e| fail(&format!("--keep: results.json does not parse: {e}")));
                for scenario in &only {
                    kept.take_scenario(&mut results, scenario);
                }
                // The server the header describes is the latest run's, when it reached
                // one: most PostgreSQL figures then come from it. The proxy's round trips
                // are replaced only with the figures measured through it: the targets
                // through the proxy are worked out from the round trips of their own run.
                if results.environment.postgres.is_some() {
                    kept.environment.postgres = results.environment.postgres.take();
                    if only.iter().any(|s| Results::through_proxy(s)) {
                        kept.environment.proxy_round_trips =
                            std::mem::take(&mut results.environment.proxy_round_trips);
                    }
                }
                if results.environment.mariadb.is_some() {
                    kept.environment.mariadb = results.environment.mariadb.take();
                }
                results = kept;
            }
            write(&results, &out);
            if let Some(broken) = broken {
                for b in &broken {
                    eprintln!("INVARIANT BROKEN: {b}");
                }
                if !broken.is_empty() {
                    std::process::exit(1);
                }
                eprintln!("every bench invariant held");
            }
        }
    }
}

/// True when the run names engines that must be reachable (`OUTBOX_TEST_REQUIRE`, as CI
/// sets it): then every part is expected to run, and a skip fails `--check`.
fn required_run() -> bool {
    std::env::var(outbox_testkit::engines::REQUIRE_VAR).is_ok_and(|v| !v.trim().is_empty())
}

fn fail(message: &str) -> ! {
    eprintln!("outbox-bench: {message}");
    std::process::exit(2)
}

fn write(results: &Results, out: &Path) {
    std::fs::create_dir_all(out).expect("create the output directory");
    let json = serde_json::to_string_pretty(results).expect("results as JSON");
    std::fs::write(out.join("results.json"), json).expect("write results.json");
    report::write(results, out, REPORT_COMMAND).expect("write the report");
    println!("{}", report::markdown(results, REPORT_COMMAND));
    eprintln!("wrote {}", out.join("REPORT.md").display());
}

/// The engines `--engines` selected.
struct Selected {
    sqlite: bool,
    postgres: bool,
    mariadb: bool,
}

async fn run(plan: Plan, only: &[String], selected: Selected) -> Results {
    let Selected {
        sqlite,
        postgres,
        mariadb,
    } = selected;
    let started = Instant::now();
    let mut ctx = Ctx {
        plan,
        engines: Vec::new(),
        results: Results::default(),
    };
    ctx.results.environment = environment(ctx.plan.mode);
    if sqlite {
        ctx.engines.push(Engine::Sqlite);
    } else {
        ctx.not_selected("SQLite");
    }
    if !postgres {
        ctx.not_selected("PostgreSQL");
    } else {
        match tokio::task::spawn_blocking(pg::url)
            .await
            .expect("server start")
        {
            Ok(url) => {
                ctx.results.environment.postgres = Some(pg::info(&url).await);
                for latency_ms in ctx.plan.latencies_ms.clone() {
                    let measured_ms = pg::round_trip_ms(&url, latency_ms).await;
                    ctx.results
                        .environment
                        .proxy_round_trips
                        .push(ProxyRoundTrip {
                            latency_ms,
                            measured_ms,
                        });
                }
                ctx.engines.push(Engine::Postgres);
            }
            Err(why) => {
                outbox_testkit::engines::unavailable("postgres", &why);
                ctx.skip(format!("PostgreSQL: {why}"));
            }
        }
    }
    if !mariadb {
        ctx.not_selected("MariaDB");
    } else {
        match mariadb::probe().await {
            Ok(info) => {
                ctx.results.environment.mariadb = Some(info);
                ctx.engines.push(Engine::Mysql);
            }
            Err(why) => {
                outbox_testkit::engines::unavailable(mariadb::ENGINE, &why);
                ctx.skip(format!("MariaDB: {why}"));
            }
        }
    }
    let wanted = |name: &str| only.is_empty() || only.iter().any(|o| o == name);
    if wanted("claims") {
        scenarios::claims::run(&mut ctx).await;
    }
    if wanted("races") {
        scenarios::race::run(&mut ctx).await;
    }
    if wanted("drains") {
        scenarios::drain::run(&mut ctx).await;
    }
    if wanted("overlap") {
        scenarios::overlap::run(&mut ctx).await;
    }
    if wanted("flow") {
        scenarios::flow::run(&mut ctx).await;
    }
    if wanted("brokers") {
        scenarios::brokers::run(&mut ctx).await;
    }
    if wanted("enqueue") {
        scenarios::enqueue::run(&mut ctx).await;
    }
    if wanted("ceiling") {
        scenarios::ceiling::run(&mut ctx).await;
    }
    if wanted("scale") {
        scenarios::scale::run(&mut ctx).await;
    }
    if wanted("held") {
        scenarios::held::run(&mut ctx).await;
    }
    if wanted("ordered") {
        scenarios::ordered::run(&mut ctx).await;
    }
    if wanted("statements") {
        scenarios::statements::run(&mut ctx).await;
    }
    if wanted("reading") {
        scenarios::reading::run(&mut ctx).await;
    }
    // It restarts the server: after every scenario that shares it.
    if wanted("soak") {
        scenarios::soak::run(&mut ctx).await;
    }
    // Last: its statement log taxes every later sqlx statement in this process.
    if wanted("costs") {
        scenarios::costs::run(&mut ctx).await;
    }
    ctx.results.environment.seconds = started.elapsed().as_secs_f64();
    ctx.results
}

fn environment(mode: &str) -> Environment {
    let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
    let cpu_model = read("/proc/cpuinfo")
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|v| v.trim_start_matches([' ', '\t', ':']).trim().to_owned())
        .unwrap_or_default();
    let memory_gib = read("/proc/meminfo")
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kib| kib / 1024.0 / 1024.0);
    let kernel = std::process::Command::new("uname")
        .arg("-sr")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    Environment {
        mode: mode.to_owned(),
        started: chrono::Utc::now().to_rfc3339(),
        cpus: std::thread::available_parallelism().map_or(0, |n| n.get()),
        cpu_model,
        memory_gib,
        kernel,
        postgres: None,
        mariadb: None,
        sqlite_version: rusqlite::version().to_owned(),
        skipped: Vec::new(),
        seconds: 0.0,
        proxy_round_trips: Vec::new(),
        reruns: Vec::new(),
    }
}
