//! The run's report: `REPORT.md` (targets first, then every measured table) beside two SVG
//! plots, all rebuilt from a [`Results`] alone.

mod ceiling_split;
mod plot;
mod tables;

use std::collections::BTreeSet;
use std::io;
use std::path::Path;

use crate::scenarios::scale::ANALYZED;

use crate::results::{
    BrokerCeilingRow, CeilingRow, ClaimRow, CostRow, DrainRow, Engine, EnqueueRow, FlowRow,
    HeldRow, OverlapRow, ReadingRow, Results, ScaleRow, SoakRow, StorePath,
};

/// Writes REPORT.md, claims.svg and scale.svg into `dir` (created if missing).
pub fn write(results: &Results, dir: &Path, command: &str) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("claims.svg"), plot::claims_svg(results)?)?;
    std::fs::write(dir.join("scale.svg"), plot::scale_svg(results)?)?;
    std::fs::write(dir.join("REPORT.md"), markdown(results, command))
}

/// The markdown text alone (for tests and for printing the quick run's summary).
pub fn markdown(results: &Results, command: &str) -> String {
    let mut md = String::new();
    header(&mut md, results, command);
    targets(&mut md, results);
    tables::cost_model(&mut md, results);
    tables::all(&mut md, results);
    md.push_str(READING);
    md
}

/// Puts a comma between each group of three digits of an unsigned decimal integer.
fn group(digits: &str) -> String {
    let groups: Vec<_> = digits
        .as_bytes()
        .rchunks(3)
        .rev()
        .map(String::from_utf8_lossy)
        .collect();
    groups.join(",")
}

fn count(n: u64) -> String {
    group(&n.to_string())
}

/// A rate: whole numbers with separators from 100 up, one decimal below.
fn rate(x: f64) -> String {
    match x {
        x if !x.is_finite() => "—".into(),
        x if x >= 100.0 => group(&format!("{x:.0}")),
        x => format!("{x:.1}"),
    }
}

fn ratio(x: f64) -> String {
    format!("{x:.2}×")
}

fn ms(x: f64) -> String {
    format!("{x:.2}")
}

fn mib(x: f64) -> String {
    format!("{x:.1}")
}

/// A per-batch command count: whole when it is whole.
fn per_batch(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

/// How a figure is shown.
type Fmt = fn(f64) -> String;

fn or_dash(value: Option<f64>, fmt: Fmt) -> String {
    value.map_or_else(|| "—".into(), fmt)
}

/// `a ÷ b`, when both are finite and `b` is positive.
fn div(a: f64, b: f64) -> Option<f64> {
    (a.is_finite() && b.is_finite() && b > 0.0).then(|| a / b)
}

/// 1 + 2N: the portable store's commands per claim batch of N.
fn portable_statements(batch: u32) -> f64 {
    1.0 + 2.0 * f64::from(batch)
}

fn claim_rate(r: &Results, key: (Engine, StorePath, u32, u32)) -> Option<f64> {
    let found = r
        .claims
        .iter()
        .find(|c| (c.engine, c.path, c.batch, c.latency_ms) == key);
    found.map(|c| c.claims_per_s)
}

/// Optimized ÷ portable claims/s for one engine, batch and latency.
fn claim_ratio(r: &Results, engine: Engine, batch: u32, latency: u32) -> Option<f64> {
    let optimized = claim_rate(r, (engine, StorePath::Optimized, batch, latency))?;
    div(
        optimized,
        claim_rate(r, (engine, StorePath::Portable, batch, latency))?,
    )
}

/// A scale case's drain rate over the same engine's `pending-10k` (clean) case with the
/// same statistics (analyzed cases over the analyzed clean case).
fn scale_ratio(r: &Results, engine: Engine, case: &str) -> Option<f64> {
    let find = |name: &str| {
        r.scale
            .iter()
            .find(|s| s.engine == engine && s.case == name)
    };
    let clean = if case.ends_with(ANALYZED) {
        format!("pending-10k{ANALYZED}")
    } else {
        "pending-10k".to_owned()
    };
    div(
        find(case)?.drain.entries_per_s,
        find(&clean)?.drain.entries_per_s,
    )
}

/// An analyzed scale case's drain rate over the same case never analyzed.
fn analyzed_ratio(r: &Results, engine: Engine, case: &str) -> Option<f64> {
    let never = case.strip_suffix(ANALYZED)?;
    let find = |name: &str| {
        r.scale
            .iter()
            .find(|s| s.engine == engine && s.case == name)
    };
    div(
        find(case)?.drain.entries_per_s,
        find(never)?.drain.entries_per_s,
    )
}

/// The drain rate of `engine`'s largest pending backlog (never analyzed) over its
/// smallest, with both backlogs.
fn backlog_ratio(r: &Results, engine: Engine) -> Option<(f64, u64, u64)> {
    let mut pending: Vec<&ScaleRow> = r
        .scale
        .iter()
        .filter(|s| s.engine == engine && s.case.starts_with("pending-"))
        .filter(|s| !s.case.ends_with(ANALYZED))
        .collect();
    pending.sort_by_key(|s| s.pending);
    let (small, big) = (pending.first()?, pending.last()?);
    let ratio = div(big.drain.entries_per_s, small.drain.entries_per_s)?;
    (big.pending > small.pending).then_some((ratio, big.pending, small.pending))
}

/// The same ratio for the bare statement loop measured beside the drain (SQLite).
fn raw_scale_ratio(r: &Results, engine: Engine, case: &str) -> Option<f64> {
    let find = |name: &str| {
        r.scale
            .iter()
            .find(|s| s.engine == engine && s.case == name)
            .and_then(|s| s.raw_rows_per_s)
    };
    div(find(case)?, find("pending-10k")?)
}

/// Optimized ÷ portable drain rate for the portable drain of the same shape.
fn drain_ratio(r: &Results, d: &DrainRow) -> Option<f64> {
    let shape = |x: &DrainRow| (x.engine, x.workers, x.batch, x.latency_ms, x.backlog);
    let same = |p: &&DrainRow| p.path == StorePath::Portable && shape(p) == shape(d);
    let portable = r
        .drains
        .iter()
        .find(same)
        .filter(|_| d.path == StorePath::Optimized)?;
    div(d.outcome.entries_per_s, portable.outcome.entries_per_s)
}

fn ceiling_ratio(c: &CeilingRow) -> Option<f64> {
    div(c.drain.entries_per_s, c.raw_rows_per_s)
}

fn push_row(md: &mut String, cells: impl IntoIterator<Item = String>) {
    md.push('|');
    for cell in cells {
        md.push_str(&format!(
            " {} |",
            cell.replace('|', "\\|").replace('\n', " ")
        ));
    }
    md.push('\n');
}

/// One table column: its heading and how a row fills it.
type Column<'a, T> = (&'a str, &'a dyn Fn(&T) -> String);

/// A GitHub table with one line per item, or a line saying nothing was measured.
fn table<T>(md: &mut String, items: &[T], columns: &[Column<'_, T>]) {
    if items.is_empty() {
        md.push_str("_Not measured in this run._\n\n");
        return;
    }
    push_row(md, columns.iter().map(|c| c.0.to_string()));
    md.push_str(&format!("|{}\n", " --- |".repeat(columns.len())));
    for item in items {
        push_row(md, columns.iter().map(|c| (c.1)(item)));
    }
    md.push('\n');
}

fn header(md: &mut String, r: &Results, command: &str) {
    let e = &r.environment;
    md.push_str(
        "# Outbox benchmarks\n\nWhat each outbox store costs on real engines: the per-row \
         portable store beside each engine's optimized store, claiming alone and racing, \
         draining end to end, enqueueing, against a raw-SQL ceiling, and as the table grows. \
         Every figure comes from one run on one machine, and the targets lead with ratios \
         taken within that run.\n\n",
    );
    md.push_str(&format!("Regenerate it with:\n\n```sh\n{command}\n```\n\n"));
    if !e.skipped.is_empty() {
        md.push_str("> **⚠ SKIPPED: this run is incomplete.** These parts did not run, so ");
        md.push_str("their rows below say \"not measured\" or are missing:\n>\n");
        for reason in &e.skipped {
            md.push_str(&format!("> - **{reason}**\n"));
        }
        md.push('\n');
    }
    if !e.reruns.is_empty() {
        md.push_str("Measured again after the run, into the same results:\n\n");
        for rerun in &e.reruns {
            md.push_str(&format!("- {rerun}\n"));
        }
        md.push('\n');
    }
    let postgres = e.postgres.as_ref().map_or_else(
        || "not reached".to_string(),
        |pg| {
            let set: Vec<String> = pg
                .settings
                .iter()
                .map(|(k, v)| format!("`{k}` = `{v}`"))
                .collect();
            format!(
                "{} at `{}`; settings: {}",
                pg.version,
                pg.url,
                set.join(", ")
            )
        },
    );
    let mariadb = e.mariadb.as_ref().map_or_else(
        || "not reached".to_string(),
        |m| {
            let set: Vec<String> = m
                .settings
                .iter()
                .map(|(k, v)| format!("`{k}` = `{v}`"))
                .collect();
            format!(
                "{} at `{}`, direct (no latency proxy); settings: {}",
                m.version,
                m.url,
                set.join(", ")
            )
        },
    );
    let known = |s: &str| {
        if s.is_empty() {
            "unknown".to_string()
        } else {
            s.to_string()
        }
    };
    let trips: Vec<String> = e
        .proxy_round_trips
        .iter()
        .map(|p| format!("+{} ms → {}", p.latency_ms, ms(p.measured_ms)))
        .collect();
    let total = e.seconds.round();
    let minutes = (total / 60.0).floor();
    md.push_str("## Environment\n\n");
    for (name, value) in [
        ("Mode", known(&e.mode)),
        ("Started", known(&e.started)),
        ("CPUs", format!("{}, {}", e.cpus, known(&e.cpu_model))),
        ("Memory", format!("{:.1} GiB", e.memory_gib)),
        ("Kernel", known(&e.kernel)),
        ("PostgreSQL", postgres),
        ("MariaDB", mariadb),
        ("SQLite", known(&e.sqlite_version)),
        (
            "Latency proxy, median `SELECT 1` round trip",
            if trips.is_empty() {
                "not measured".to_string()
            } else {
                trips.join(", ")
            },
        ),
        (
            "Run took",
            format!("{minutes:.0} min {:.0} s", total - minutes * 60.0),
        ),
    ] {
        md.push_str(&format!("- **{name}:** {value}\n"));
    }
    md.push('\n');
}

/// One line of the targets table.
struct Target {
    what: String,
    wanted: String,
    /// `None`: not measured in this run.
    measured: Option<String>,
    /// `None` beside a measurement: reported, with no fixed target.
    met: Option<bool>,
}

/// How a target judges its figure.
#[derive(Clone, Copy)]
enum Rule {
    /// The worst (lowest) figure must reach this.
    AtLeast(f64),
    /// The worst (highest) figure must stay under this.
    Below(f64),
    /// No fixed target yet: the lowest figure is shown.
    Reported,
}

impl Rule {
    /// Judges the worst of the finite `values`.
    fn judge(self, what: String, values: impl IntoIterator<Item = f64>, fmt: Fmt) -> Target {
        let values: Vec<f64> = values.into_iter().filter(|v| v.is_finite()).collect();
        let pick = if matches!(self, Rule::Below(_)) {
            f64::max
        } else {
            f64::min
        };
        let worst = values.iter().copied().reduce(pick);
        let n = values.len();
        let of = if n > 1 {
            format!(" (worst of {n})")
        } else {
            String::new()
        };
        let (wanted, met) = match self {
            Rule::AtLeast(x) => (format!("≥ {}", fmt(x)), worst.map(|w| w >= x)),
            Rule::Below(x) => (format!("< {}", fmt(x)), worst.map(|w| w < x)),
            Rule::Reported => ("—".into(), None),
        };
        let measured = worst.map(|w| format!("{}{of}", fmt(w)));
        Target {
            what,
            wanted,
            measured,
            met,
        }
    }
}

/// A target every measured row must hit exactly: `seen` lists the distinct figures (empty
/// when nothing was measured).
fn exact(what: &str, wanted: &str, mut seen: Vec<String>, all_hit: bool) -> Target {
    seen.dedup();
    let measured = (!seen.is_empty()).then(|| seen.join(", "));
    let met = measured.as_ref().map(|_| all_hit);
    Target {
        what: what.into(),
        wanted: wanted.into(),
        measured,
        met,
    }
}

fn target_rows(r: &Results) -> Vec<Target> {
    use Rule::{AtLeast, Below, Reported};
    let pg = Engine::Postgres;
    let mut t = Vec::new();
    for l in [1, 5] {
        let what = format!(
            "Optimized ÷ portable claims/s, PostgreSQL, batch 100, {l} ms \
             (the design record asked 2×)"
        );
        t.push(AtLeast(50.0).judge(what, claim_ratio(r, pg, 100, l), ratio));
    }
    let (mut portable, mut optimized) = (r.costs.clone(), r.costs.clone());
    portable.retain(|c| c.path == StorePath::Portable);
    optimized.retain(|c| c.path == StorePath::Optimized);
    portable.sort_by_key(|c| c.batch);
    let all_one = optimized.iter().all(|c| c.statements == 1.0);
    let seen = Vec::from_iter(BTreeSet::from_iter(
        optimized.iter().map(|c| per_batch(c.statements)),
    ));
    t.push(exact(
        "Statements per claim batch, optimized stores",
        "exactly 1",
        seen,
        all_one,
    ));
    let all_hit = portable
        .iter()
        .all(|c| c.statements == portable_statements(c.batch));
    let shown = |c: &CostRow| format!("{} at N = {}", per_batch(c.statements), c.batch);
    let seen = portable.iter().map(shown).collect();
    t.push(exact(
        "Statements per claim batch, portable store",
        "1 + 2N",
        seen,
        all_hit,
    ));
    let n = r.races.len();
    let dup: u64 = r.races.iter().map(|x| x.duplicate_live_leases).sum();
    let lost: u64 = r.races.iter().map(|x| x.lost_completions).sum();
    for (what, total) in [("Duplicate live leases", dup), ("Lost completions", lost)] {
        let seen = (n > 0).then(|| format!("{} over {n} races", count(total)));
        let what = format!("{what} in every race");
        t.push(exact(&what, "0", seen.into_iter().collect(), total == 0));
    }

    let what = "Drain ÷ raw-SQL ceiling, PostgreSQL, 2 workers, batch 100, never-analyzed backlog";
    let two = |c: &&CeilingRow| c.engine == pg && c.clients == 2 && c.batch == 100;
    let v = r.ceilings.iter().filter(two).filter_map(ceiling_ratio);
    t.push(AtLeast(0.90).judge(what.into(), v, ratio));
    for (case, what, floor) in [
        ("pending-1m", "1M pending ÷ 10k pending", 0.85),
        ("history-1m", "1M delivered history ÷ clean", 0.90),
        ("parked-100k", "100k parked retries ÷ clean", 0.90),
        (
            "pending-1m-analyzed",
            "1M pending ÷ 10k pending, both analyzed",
            0.85,
        ),
        (
            "history-1m-analyzed",
            "1M delivered history ÷ clean, both analyzed",
            0.90,
        ),
    ] {
        let what = format!("{what}, PostgreSQL drain");
        t.push(AtLeast(floor).judge(what, scale_ratio(r, pg, case), ratio));
    }
    let what = "200k pending, analyzed ÷ never analyzed, PostgreSQL drain";
    let v = analyzed_ratio(r, pg, "pending-200k-analyzed");
    t.push(AtLeast(0.95).judge(what.into(), v, ratio));
    for l in [1u32, 5] {
        let key = (pg, StorePath::Optimized, 1, 100, l);
        let at = |d: &&DrainRow| (d.engine, d.path, d.workers, d.batch, d.latency_ms) == key;
        let v = r.drains.iter().filter(at).map(|d| d.outcome.entries_per_s);
        // The proxy's timer is coarse: judge against the round trip it really gave.
        let trip = r
            .environment
            .proxy_round_trips
            .iter()
            .find(|p| p.latency_ms == l)
            .map_or(f64::from(l), |p| p.measured_ms.max(f64::from(l)));
        let what = format!(
            "Drain through {l} ms proxy (round trip measured {}), PostgreSQL, 1 worker, \
             batch 100, entries/s (0.8 × batch ÷ round trip)",
            ms(trip)
        );
        t.push(AtLeast(80_000.0 / trip).judge(what, v, rate));
    }
    let big = |s: &&ScaleRow| s.engine == pg && s.case == "pending-1m";
    let v = r.scale.iter().filter(big).map(|s| s.drain.peak_rss_mib);
    let what = "Drain peak RSS MiB, PostgreSQL, 1M backlog of 1 KiB payloads";
    t.push(Below(64.0).judge(what.into(), v, mib));
    let small = |e: &&EnqueueRow| {
        (e.engine, e.path, e.per_call, e.payload_bytes) == (pg, StorePath::Optimized, 1_000, 64)
    };
    let v = r.enqueues.iter().filter(small).map(|e| e.entries_per_s);
    let what = "Bulk enqueue, PostgreSQL, 64 B entries in calls of 1,000 (1,000,000 of them in \
                the full run, as `outbox enqueue --count 1000000 --batch 1000`), entries/s";
    t.push(AtLeast(110_000.0).judge(what.into(), v, rate));
    for l in [0u32, 1, 5] {
        let at = |o: &&OverlapRow| (o.engine, o.workers, o.latency_ms) == (pg, 1, l);
        let v = r
            .overlap
            .iter()
            .filter(at)
            .filter_map(|o| div(o.ahead.entries_per_s, o.one_at_a_time.entries_per_s));
        let what = format!(
            "Claiming ahead ÷ one batch at a time, PostgreSQL drain, 1 worker, batch 100, +{l} ms"
        );
        t.push(Reported.judge(what, v, ratio));
        let v = r.overlap.iter().filter(at).filter_map(|o| {
            let one = o.one_ahead.as_ref()?;
            div(o.ahead.entries_per_s, one.entries_per_s)
        });
        let what = format!(
            "Two batches ahead (the default) ÷ one, PostgreSQL drain, 1 worker, batch 100, +{l} ms"
        );
        t.push(Reported.judge(what, v, ratio));
    }
    t.extend(flow_targets(r));
    for engine in [Engine::Sqlite, Engine::Postgres, Engine::Mysql] {
        for broker in crate::brokers::BROKERS {
            let of = |name: &str| {
                r.brokers
                    .iter()
                    .find(|b| b.engine == engine && b.emitter == name)
                    .map(|b| b.outcome.entries_per_s)
            };
            let v = of(broker).zip(of("noop")).and_then(|(b, n)| div(b, n));
            let what = format!(
                "{} drain into {broker} ÷ into noop, 1 worker, batch 100, 32 in flight",
                engine.label()
            );
            t.push(Rule::AtLeast(0.80).judge(what, v, ratio));
        }
    }
    for broker in crate::brokers::BROKERS {
        let of = |publisher: &str, in_flight: usize| {
            r.broker_ceilings
                .iter()
                .find(|c| {
                    (c.broker.as_str(), c.publisher.as_str(), c.in_flight)
                        == (broker, publisher, in_flight)
                })
                .map(|c| c.per_s)
        };
        let client = of("client", 32);
        let what = format!("{broker} emitter alone ÷ client alone, 32 in flight, no outbox");
        let v = of("emitter", 32).zip(client).and_then(|(e, c)| div(e, c));
        t.push(Rule::Reported.judge(what, v, ratio));
        let what = format!("{broker} client alone, 256 in flight ÷ 32 in flight, no outbox");
        let v = of("client", 256).zip(client).and_then(|(d, c)| div(d, c));
        t.push(Rule::Reported.judge(what, v, ratio));
    }
    t.extend(sqlite_targets(r));
    t.extend(mariadb_targets(r));
    t.extend(ordered_targets(r));
    t.extend(held_targets(r));
    t.extend(reading_targets(r));
    t.extend(soak_targets(r));
    t
}

/// `row`'s figure (`of`) over the same engine's figure on the table without history.
fn reading_ratio(r: &Results, row: &ReadingRow, of: fn(&ReadingRow) -> f64) -> Option<f64> {
    let base = r
        .reading
        .iter()
        .find(|b| b.engine == row.engine && b.delivered == 0 && b.live == row.live)?;
    (row.delivered > 0)
        .then(|| div(of(row), of(base)))
        .flatten()
}

/// `outbox stats` behind the history ÷ without it: the live stats under 3×, the full
/// count reported.
fn reading_targets(r: &Results) -> Vec<Target> {
    let mut t = Vec::new();
    let engines = [Engine::Postgres, Engine::Mysql, Engine::Sqlite];
    for engine in engines {
        let behind = || {
            r.reading
                .iter()
                .filter(move |x| x.engine == engine && x.delivered > 0)
        };
        let history = behind().map(|x| x.delivered).max().map_or_else(
            || "a delivered history".to_owned(),
            |n| format!("{} delivered", count(n)),
        );
        let what = format!(
            "{}: `outbox stats` (live) behind {history} ÷ without it",
            engine.label()
        );
        let v = behind().filter_map(|x| reading_ratio(r, x, |y| y.live_ms));
        t.push(Rule::Below(3.0).judge(what, v, ratio));
        let what = format!(
            "{}: `outbox stats --exact` behind {history} ÷ without it",
            engine.label()
        );
        let v = behind().filter_map(|x| reading_ratio(r, x, |y| y.exact_ms));
        t.push(Rule::Reported.judge(what, v, ratio));
    }
    t
}

/// The drain against a slow emitter: at least 0.8 of concurrency ÷ mean emission time.
fn flow_targets(r: &Results) -> Vec<Target> {
    let mut t = Vec::new();
    for engine in [Engine::Sqlite, Engine::Postgres] {
        for (concurrency, batch) in [(8, 50), (32, 100)] {
            for tail in [false, true] {
                let at = |f: &&FlowRow| {
                    (f.engine, f.concurrency, f.batch) == (engine, concurrency, batch)
                        && f.emission.contains("1 in") == tail
                };
                let v = r
                    .flow
                    .iter()
                    .filter(at)
                    .filter_map(|f| div(f.outcome.entries_per_s, f.measured_ideal_per_s()?));
                let what = format!(
                    "{} drain ÷ (concurrency ÷ measured mean emission time), 1 worker, \
                     concurrency {concurrency}, batch {batch}, emission 5 ms{}",
                    engine.label(),
                    if tail { ", 1 in 100 at 200 ms" } else { "" }
                );
                t.push(Rule::AtLeast(0.8).judge(what, v, ratio));
            }
        }
    }
    t
}

/// The SQLite store's targets: against its raw-statement loop, absolute, and as the
/// table grows.
fn sqlite_targets(r: &Results) -> Vec<Target> {
    use Rule::AtLeast;
    let lite = Engine::Sqlite;
    let mut t = Vec::new();
    // Rows of older runs carry no size: they ran at the plan's size, not 64 B.
    let sized = |c: &CeilingRow| {
        if c.payload_bytes == 64 {
            "64 B"
        } else {
            "the plan's"
        }
    };
    for size in ["the plan's", "64 B"] {
        let at = |c: &&CeilingRow| c.engine == lite && sized(c) == size;
        let label = if size == "64 B" {
            "64 B payloads (the command's default)".to_owned()
        } else {
            "the plan's payloads".to_owned()
        };
        let v = r.ceilings.iter().filter(at).filter_map(ceiling_ratio);
        let what =
            format!("SQLite drain ÷ raw loop of the same statements, 1 worker, batch 100, {label}");
        t.push(AtLeast(0.90).judge(what, v, ratio));
        let v = r.ceilings.iter().filter(at).map(|c| c.drain.entries_per_s);
        let what = format!("SQLite drain entries/s, 1 worker, batch 100, noop, {label}");
        t.push(AtLeast(25_000.0).judge(what, v, rate));
    }
    for (case, what) in [
        ("history-1m", "1M delivered history ÷ clean, SQLite drain"),
        ("parked-100k", "100k parked retries ÷ clean, SQLite drain"),
    ] {
        t.push(AtLeast(0.90).judge(what.into(), scale_ratio(r, lite, case), ratio));
    }
    let small = |e: &&EnqueueRow| {
        (e.engine, e.path, e.per_call, e.payload_bytes) == (lite, StorePath::Optimized, 1_000, 64)
    };
    let v = r.enqueues.iter().filter(small).map(|e| e.entries_per_s);
    let what = "Bulk enqueue, SQLite, 64 B entries in calls of 1,000, entries/s";
    t.push(AtLeast(100_000.0).judge(what.into(), v, rate));
    t
}

/// MariaDB's figures: the optimized drain against the portable one (≥ 5×), the drain
/// against the raw loop of the store's statements (≥ 0.8×), and the drain as the backlog
/// grows (≥ 0.85×); the claim ratio and the absolute rate are reported. MariaDB is
/// reached direct, with no added latency.
fn mariadb_targets(r: &Results) -> Vec<Target> {
    use Rule::{AtLeast, Reported};
    let m = Engine::Mysql;
    let mut t = Vec::new();
    let what = "Optimized ÷ portable claims/s, MariaDB, batch 100, direct";
    t.push(Reported.judge(what.into(), claim_ratio(r, m, 100, 0), ratio));
    let one = |d: &&DrainRow| {
        (d.engine, d.path, d.workers, d.batch, d.latency_ms) == (m, StorePath::Optimized, 1, 100, 0)
    };
    let v = r
        .drains
        .iter()
        .filter(one)
        .filter_map(|d| drain_ratio(r, d));
    let what = "Optimized ÷ portable drain entries/s, MariaDB, 1 worker, batch 100, direct";
    t.push(AtLeast(5.0).judge(what.into(), v, ratio));
    let ceilings = || r.ceilings.iter().filter(|c| c.engine == m);
    let what = "MariaDB drain ÷ raw loop of the store's statements (sqlx, one connection), \
                1 worker, batch 100";
    t.push(AtLeast(0.80).judge(what.into(), ceilings().filter_map(ceiling_ratio), ratio));
    let what = "MariaDB drain ÷ the store's own calls in the same loop, 1 worker, batch 100";
    let v = ceilings().filter_map(|c| div(c.drain.entries_per_s, c.store_rows_per_s?));
    t.push(Reported.judge(what.into(), v, ratio));
    let what = "MariaDB drain entries/s, 1 worker, batch 100, noop, on the ceiling's backlog";
    t.push(Reported.judge(what.into(), ceilings().map(|c| c.drain.entries_per_s), rate));
    let scale = backlog_ratio(r, m);
    let what = match scale {
        Some((_, big, small)) => format!(
            "MariaDB drain, {} pending ÷ {} pending (2 workers, batch 100)",
            count(big),
            count(small)
        ),
        None => "MariaDB drain, largest pending backlog ÷ smallest (2 workers, batch 100)".into(),
    };
    t.push(AtLeast(0.85).judge(what, scale.map(|s| s.0), ratio));
    t
}

/// The cost of per-key order: the ordered drain ÷ the unordered one on the same keys.
fn ordered_targets(r: &Results) -> Vec<Target> {
    let cost = |keys: u64| {
        r.ordered
            .iter()
            .filter(move |o| o.keys == keys)
            .filter_map(|o| o.cost_of_order(&r.ordered))
    };
    let what = |keys: &str| {
        format!("Drain in per-key order ÷ unordered, {keys} keys (2 workers, batch 100)")
    };
    vec![
        Rule::AtLeast(0.5).judge(what("10"), cost(10), ratio),
        Rule::AtLeast(0.8).judge(what("1,000"), cost(1_000), ratio),
        Rule::AtLeast(0.9).judge(what("100,000"), cost(100_000), ratio),
    ]
}

/// The drain while a snapshot is held elsewhere: its last round against its first, and
/// against the same rounds with nothing held; the peer queue's same figures beside them,
/// reported, and how far the outbox stays above the peer.
fn held_targets(r: &Results) -> Vec<Target> {
    let mut t = Vec::new();
    // This outbox's targets are listed even when it was not measured.
    let mut queues: Vec<Option<&str>> = r.held.iter().map(|h| h.queue.as_deref()).collect();
    queues.push(None);
    queues.sort_unstable();
    queues.dedup();
    for queue in queues {
        let run = |held: bool| {
            r.held
                .iter()
                .filter(move |h| h.held == held && h.queue.as_deref() == queue)
        };
        let (who, last_over_first, held_over_nothing) = match queue {
            None => (
                "PostgreSQL drain".to_owned(),
                Rule::AtLeast(0.8),
                Rule::AtLeast(0.5),
            ),
            Some(peer) => (format!("Peer queue {peer}"), Rule::Reported, Rule::Reported),
        };
        let what = format!(
            "{who} with a transaction held open elsewhere for the whole run: median round \
             of the last tenth ÷ of the first tenth"
        );
        t.push(last_over_first.judge(what, run(true).filter_map(HeldRow::last_over_first), ratio));
        let both = run(true)
            .filter_map(HeldRow::last_tenth)
            .zip(run(false).filter_map(HeldRow::last_tenth));
        let what = format!(
            "{who}'s last tenth of rounds (median), transaction held open elsewhere ÷ nothing \
             held"
        );
        t.push(held_over_nothing.judge(what, both.filter_map(|(h, n)| div(h, n)), ratio));
    }
    let held_last = |peer: bool| {
        r.held
            .iter()
            .filter(move |h| h.held && h.queue.is_some() == peer)
            .filter_map(HeldRow::last_tenth)
    };
    let above = held_last(false)
        .zip(held_last(true))
        .filter_map(|(ours, peer)| div(ours, peer));
    let what = "Last tenth of rounds (median) with a transaction held open elsewhere: this \
                outbox ÷ the peer queue";
    t.push(Rule::Reported.judge(what.into(), above, ratio));
    t
}

/// The soak: nothing lost or emitted twice without a kill to explain it, pickup latency,
/// and the memory of the drain process never killed.
fn soak_targets(r: &Results) -> Vec<Target> {
    let broken = r
        .soak
        .iter()
        .map(|s| (s.lost + s.undelivered + s.never_emitted + s.unexplained_duplicates()) as f64);
    let what = "Soak (PostgreSQL, drains killed every few seconds, two server restarts): \
                entries lost, left undelivered, or emitted twice with no kill to explain it";
    let whole: Fmt = |x| format!("{x:.0}");
    let mut t = vec![Rule::Below(1.0).judge(what.into(), broken, whole)];
    let what = "Soak: pickup latency (enqueue returned → first emission), median, ms";
    t.push(Rule::Reported.judge(what.into(), r.soak.iter().map(|s| s.pickup_p50_ms), ms));
    let what = "Soak: pickup latency, 99th percentile, ms";
    t.push(Rule::Reported.judge(what.into(), r.soak.iter().map(|s| s.pickup_p99_ms), ms));
    let what = "Soak: resident memory of the drain process never killed, \
                last tenth of the run ÷ second tenth (median samples)";
    let growth = r.soak.iter().filter_map(SoakRow::rss_growth);
    t.push(Rule::Below(1.1).judge(what.into(), growth, ratio));
    t
}

fn targets(md: &mut String, r: &Results) {
    md.push_str("## Targets\n\n");
    let verdict = |t: &Target| match (&t.measured, t.met) {
        (None, _) => "—".into(),
        (Some(_), None) => "reported".into(),
        (Some(_), Some(true)) => "met".into(),
        (Some(_), Some(false)) => "**missed**".into(),
    };
    let measured = |t: &Target| t.measured.clone().unwrap_or_else(|| "not measured".into());
    let columns: [Column<'_, Target>; 4] = [
        ("target", &|t| t.what.clone()),
        ("wanted", &|t| t.wanted.clone()),
        ("measured", &measured),
        ("met?", &verdict),
    ];
    table(md, &target_rows(r), &columns);
}

const READING: &str = "## How to read this\n\n\
- The machine is shared and noisy: absolute rates move from run to run. Compare ratios \
taken within one run (optimized ÷ portable, drain ÷ raw, case ÷ clean), not figures across \
runs.\n\
- Latency is injected by a userspace loopback proxy in front of PostgreSQL, which delays \
each direction by half the stated latency, so a round trip costs at least the full figure.\n\
- SQLite has no network, and the proxy reads only PostgreSQL's protocol, so every row with \
added latency is PostgreSQL only: MariaDB is measured direct, on loopback.\n\
- MariaDB's optimized claim is one short transaction of a fixed number of statements (a \
locking read that skips locked rows, then one lease write), not one statement: its \
statement counts are not measured (the cost-model table and target cover SQLite and \
PostgreSQL).\n";

#[cfg(test)]
mod tests {
    use super::*;

    /// Known figures: at 5 ms claims 5,000 ÷ 100 (met), at 1 ms 20,000 ÷ 1,000 (missed); a
    /// 1 ms drain at 85,000/s (met) and no 5 ms drain; a ceiling at 0.95×; 1M pending at 0.75×.
    const SAMPLE: &str = r#"{
      "environment": {"mode": "quick", "started": "2025-01-01T00:00:00Z", "cpus": 2,
        "cpu_model": "Test CPU", "memory_gib": 4.0, "kernel": "Linux 6.1", "postgres": null,
        "sqlite_version": "3.46.0", "skipped": [], "seconds": 125.0},
      "claims": [
        {"engine": "postgres", "path": "portable", "batch": 100, "latency_ms": 5, "claimed": 100, "calls": 1, "seconds": 1.0, "claims_per_s": 100.0, "p50_ms": 1.0, "p95_ms": 2.0},
        {"engine": "postgres", "path": "optimized", "batch": 100, "latency_ms": 5, "claimed": 100, "calls": 1, "seconds": 1.0, "claims_per_s": 5000.0, "p50_ms": 1.0, "p95_ms": 2.0},
        {"engine": "postgres", "path": "portable", "batch": 100, "latency_ms": 1, "claimed": 100, "calls": 1, "seconds": 1.0, "claims_per_s": 1000.0, "p50_ms": 1.0, "p95_ms": 2.0},
        {"engine": "postgres", "path": "optimized", "batch": 100, "latency_ms": 1, "claimed": 100, "calls": 1, "seconds": 1.0, "claims_per_s": 20000.0, "p50_ms": 1.0, "p95_ms": 2.0},
        {"engine": "sqlite", "path": "optimized", "batch": 100, "latency_ms": 0, "claimed": 100, "calls": 1, "seconds": 1.0, "claims_per_s": 123456.7, "p50_ms": 1.0, "p95_ms": 2.0}
      ],
      "costs": [
        {"engine": "postgres", "path": "portable", "batch": 100, "statements": 201.0, "round_trips": 201.0, "completion_statements": 1.0},
        {"engine": "postgres", "path": "optimized", "batch": 100, "statements": 1.0, "round_trips": 1.0, "completion_statements": 1.0}
      ],
      "races": [
        {"engine": "postgres", "path": "optimized", "batch": 100, "latency_ms": 0, "workers": 4, "claimed": 4000, "seconds": 1.0, "claims_per_s": 4000.0, "p50_ms": 1.0, "p95_ms": 2.0, "p99_ms": 3.0, "duplicate_live_leases": 0, "lost_completions": 0, "longest_overtaken_wait_ms": 4.5}
      ],
      "drains": [
        {"engine": "postgres", "path": "portable", "workers": 1, "batch": 100, "latency_ms": 1, "backlog": 10000, "outcome": {"delivered": 10000, "seconds": 1.0, "entries_per_s": 4250.0, "peak_rss_mib": 20.0}},
        {"engine": "postgres", "path": "optimized", "workers": 1, "batch": 100, "latency_ms": 1, "backlog": 10000, "outcome": {"delivered": 10000, "seconds": 1.0, "entries_per_s": 85000.0, "peak_rss_mib": 20.0}}
      ],
      "enqueues": [
        {"engine": "sqlite", "path": "optimized", "per_call": 1000, "entries": 50000, "seconds": 2.0, "entries_per_s": 25000.0}
      ],
      "ceilings": [
        {"engine": "postgres", "method": "pgbench", "backlog": 100000, "batch": 100, "clients": 2, "raw_rows_per_s": 10000.0, "drain": {"delivered": 100000, "seconds": 1.0, "entries_per_s": 9500.0, "peak_rss_mib": 30.0}}
      ],
      "scale": [
        {"engine": "postgres", "case": "pending-10k", "description": "clean | 10k", "pending": 10000, "drain": {"delivered": 10000, "seconds": 1.0, "entries_per_s": 20000.0, "peak_rss_mib": 50.0}},
        {"engine": "postgres", "case": "pending-1m", "description": "1M pending", "pending": 1000000, "drain": {"delivered": 10000, "seconds": 1.0, "entries_per_s": 15000.0, "peak_rss_mib": 50.0}},
        {"engine": "postgres", "case": "pending-10k-analyzed", "description": "clean, analyzed", "pending": 10000, "drain": {"delivered": 10000, "seconds": 1.0, "entries_per_s": 16000.0, "peak_rss_mib": 50.0}},
        {"engine": "postgres", "case": "pending-1m-analyzed", "description": "1M pending, analyzed", "pending": 1000000, "drain": {"delivered": 10000, "seconds": 1.0, "entries_per_s": 14400.0, "peak_rss_mib": 50.0}}
      ],
      "held": [
        {"engine": "postgres", "held": false, "seconds": 300.0, "round_entries": 10000, "rounds_per_s": [10000.0, 9000.0], "dead_rows": 500},
        {"engine": "postgres", "held": true, "seconds": 301.0, "round_entries": 10000, "rounds_per_s": [8000.0, 2000.0, 1200.0], "dead_rows": 600000},
        {"engine": "postgres", "queue": "pgqueuer 1.6.0", "held": false, "seconds": 300.0, "round_entries": 10000, "rounds_per_s": [6000.0, 5000.0], "dead_rows": 0},
        {"engine": "postgres", "queue": "pgqueuer 1.6.0", "held": true, "seconds": 300.0, "round_entries": 10000, "rounds_per_s": [5000.0, 1000.0], "dead_rows": 52000}
      ]
    }"#;

    fn sample() -> Results {
        serde_json::from_str(SAMPLE).unwrap()
    }

    /// Asserts that the one line of `md` holding `needle` ends with `tail`.
    fn ends(md: &str, needle: &str, tail: &str) {
        let hits: Vec<&str> = md.lines().filter(|l| l.contains(needle)).collect();
        assert_eq!(hits.len(), 1, "lines holding {needle:?} in:\n{md}");
        assert!(
            hits[0].ends_with(tail),
            "{:?} should end with {tail:?}",
            hits[0]
        );
    }

    #[test]
    fn targets_table_judges_the_known_ratios() {
        let md = markdown(&sample(), "outbox-bench run --quick");
        assert!(md.contains("## Targets\n\n| target | wanted | measured | met? |\n"));
        assert!(md.contains("```sh\noutbox-bench run --quick\n```"));
        ends(
            &md,
            "claims/s, PostgreSQL, batch 100, 5 ms",
            "| 50.00× | met |",
        );
        ends(
            &md,
            "claims/s, PostgreSQL, batch 100, 1 ms",
            "| 20.00× | **missed** |",
        );
        ends(
            &md,
            "Statements per claim batch, optimized",
            "| exactly 1 | 1 | met |",
        );
        ends(
            &md,
            "Statements per claim batch, portable",
            "| 201 at N = 100 | met |",
        );
        ends(
            &md,
            "Duplicate live leases in every",
            "| 0 | 0 over 1 races | met |",
        );
        ends(&md, "Drain ÷ raw-SQL ceiling", "| ≥ 0.90× | 0.95× | met |");
        ends(
            &md,
            "1M pending ÷ 10k pending, PostgreSQL",
            "| ≥ 0.85× | 0.75× | **missed** |",
        );
        // Analyzed cases are judged against the analyzed clean backlog, not the other one.
        ends(
            &md,
            "1M pending ÷ 10k pending, both analyzed",
            "| ≥ 0.85× | 0.90× | met |",
        );
        ends(
            &md,
            "200k pending, analyzed ÷ never analyzed",
            "| ≥ 0.95× | not measured | — |",
        );
        ends(
            &md,
            "Drain through 1 ms proxy",
            "| ≥ 80,000 | 85,000 | met |",
        );
        ends(&md, "Drain peak RSS", "| < 64.0 | 50.0 | met |");
        // The tables after the targets: separators, ratios, escaped pipes, the cost model.
        ends(
            &md,
            "| SQLite | optimized | 100 | 0 |",
            "| 123,457 | 1.00 | 2.00 | — |",
        );
        ends(
            &md,
            "| PostgreSQL | optimized | 100 | 1 |",
            "| 20,000 | 1.00 | 2.00 | 20.00× |",
        );
        ends(&md, "| 1 | 100 | 498 | 1,000 |", "| 20,000 | 20.00× |");
        ends(
            &md,
            "| PostgreSQL | optimized | 1 | 100 | 1 | 10,000 |",
            "| 85,000 | 20.0 | 20.00× |",
        );
        ends(
            &md,
            "| pending-1m |",
            "| 10,000 | 15,000 | 0.75× | — | — | — | 50.0 |",
        );
        ends(
            &md,
            "| pending-1m-analyzed |",
            "| 10,000 | 14,400 | 0.90× | 0.96× | — | — | 50.0 |",
        );
        ends(
            &md,
            "PostgreSQL drain with a transaction held open elsewhere for the whole run",
            "| ≥ 0.80× | 0.15× | **missed** |",
        );
        ends(
            &md,
            "PostgreSQL drain's last tenth of rounds (median), transaction held open",
            "| ≥ 0.50× | 0.13× | **missed** |",
        );
        ends(
            &md,
            "Peer queue pgqueuer 1.6.0 with a transaction held open",
            "| — | 0.20× | reported |",
        );
        ends(
            &md,
            "this outbox ÷ the peer queue",
            "| — | 1.20× | reported |",
        );
        ends(
            &md,
            "| PostgreSQL | this outbox | yes |",
            "| 301 | 3 | 10,000 | 8,000 | 1,200 | 0.15× | 600,000 |",
        );
        ends(
            &md,
            "| PostgreSQL | pgqueuer 1.6.0 | yes |",
            "| 300 | 2 | 10,000 | 5,000 | 1,000 | 0.20× | 52,000 |",
        );
        assert!(md.contains("| clean \\| 10k |"));
        assert!(md.contains("![claims/s against batch](claims.svg)"));
    }

    #[test]
    fn missing_figures_say_not_measured() {
        let md = markdown(&sample(), "cmd");
        ends(
            &md,
            "1M delivered history ÷ clean, PostgreSQL",
            "| ≥ 0.90× | not measured | — |",
        );
        ends(
            &md,
            "Drain through 5 ms proxy",
            "| ≥ 16,000 | not measured | — |",
        );
        ends(
            &md,
            "SQLite drain ÷ raw loop of the same statements, 1 worker, batch 100, 64 B",
            "| ≥ 0.90× | not measured | — |",
        );
        let empty = markdown(&Results::default(), "cmd");
        let unmeasured = empty
            .lines()
            .filter(|l| l.ends_with("| not measured | — |"));
        assert_eq!(unmeasured.count(), 75, "{empty}");
        assert!(empty.contains("## Races\n\n_Not measured in this run._\n"));
        assert!(!empty.contains("SKIPPED"));
        let mut skipped = sample();
        skipped
            .environment
            .skipped
            .push("PostgreSQL unreachable".into());
        let md = markdown(&skipped, "cmd");
        assert!(md.contains("SKIPPED") && md.contains("> - **PostgreSQL unreachable**"));
    }

    #[test]
    fn broker_ceilings_are_shown_beside_the_client_at_32() {
        let row = |publisher: &str, in_flight: usize, per_s: f64| BrokerCeilingRow {
            broker: "RabbitMQ".into(),
            publisher: publisher.into(),
            in_flight,
            messages: 20_000,
            payload_bytes: 1_024,
            per_s,
        };
        let results = Results {
            broker_ceilings: vec![
                row("emitter", 32, 7_200.0),
                row("client", 32, 8_000.0),
                row("client", 256, 16_000.0),
            ],
            ..Results::default()
        };
        let md = markdown(&results, "cmd");
        ends(
            &md,
            "RabbitMQ emitter alone ÷ client alone",
            "| — | 0.90× | reported |",
        );
        ends(
            &md,
            "RabbitMQ client alone, 256 in flight",
            "| — | 2.00× | reported |",
        );
        ends(
            &md,
            "| RabbitMQ | emitter alone | 32 |",
            "| 20,000 | 1,024 | 7,200 | 0.90× |",
        );
        ends(
            &md,
            "NATS JetStream emitter alone ÷",
            "| — | not measured | — |",
        );
        ends(
            &md,
            "PostgreSQL drain into RabbitMQ ÷ into noop",
            "| ≥ 0.80× | not measured | — |",
        );
    }

    #[test]
    fn mariadb_figures_are_reported_beside_their_baselines() {
        let results: Results = serde_json::from_str(
            r#"{
          "environment": {"mode": "quick", "started": "2025-01-01T00:00:00Z", "cpus": 2,
            "cpu_model": "Test CPU", "memory_gib": 4.0, "kernel": "Linux 6.1", "postgres": null,
            "mariadb": {"version": "MariaDB 10.11.9", "url": "mysql://root@127.0.0.1:3306",
              "settings": [["innodb_flush_log_at_trx_commit", "1"]]},
            "sqlite_version": "3.46.0", "skipped": [], "seconds": 10.0},
          "claims": [
            {"engine": "mariadb", "path": "portable", "batch": 100, "latency_ms": 0, "claimed": 100, "calls": 1, "seconds": 1.0, "claims_per_s": 500.0, "p50_ms": 1.0, "p95_ms": 2.0},
            {"engine": "mariadb", "path": "optimized", "batch": 100, "latency_ms": 0, "claimed": 100, "calls": 1, "seconds": 1.0, "claims_per_s": 5000.0, "p50_ms": 1.0, "p95_ms": 2.0}
          ],
          "costs": [], "races": [], "enqueues": [],
          "drains": [
            {"engine": "mariadb", "path": "portable", "workers": 1, "batch": 100, "latency_ms": 0, "backlog": 240, "outcome": {"delivered": 200, "seconds": 1.0, "entries_per_s": 250.0, "peak_rss_mib": 20.0, "table_delivered": 200}},
            {"engine": "mariadb", "path": "optimized", "workers": 1, "batch": 100, "latency_ms": 0, "backlog": 240, "outcome": {"delivered": 200, "seconds": 1.0, "entries_per_s": 2000.0, "peak_rss_mib": 20.0, "table_delivered": 200}}
          ],
          "ceilings": [
            {"engine": "mariadb", "method": "loop", "backlog": 2000, "batch": 100, "clients": 1, "raw_rows_per_s": 4000.0, "store_rows_per_s": 3000.0, "raw_delivered": 2000, "drain": {"delivered": 2000, "seconds": 1.0, "entries_per_s": 2400.0, "peak_rss_mib": 30.0}}
          ],
          "scale": [
            {"engine": "mariadb", "case": "pending-5k", "description": "5k", "pending": 5000, "drain": {"delivered": 500, "seconds": 1.0, "entries_per_s": 1800.0, "peak_rss_mib": 22.0}},
            {"engine": "mariadb", "case": "pending-1k", "description": "1k", "pending": 1000, "drain": {"delivered": 500, "seconds": 1.0, "entries_per_s": 2000.0, "peak_rss_mib": 22.0}}
          ]
        }"#,
        )
        .unwrap();
        let md = markdown(&results, "cmd");
        ends(
            &md,
            "claims/s, MariaDB, batch 100, direct",
            "| — | 10.00× | reported |",
        );
        ends(
            &md,
            "drain entries/s, MariaDB, 1 worker",
            "| ≥ 5.00× | 8.00× | met |",
        );
        ends(
            &md,
            "MariaDB drain ÷ raw loop",
            "| ≥ 0.80× | 0.60× | **missed** |",
        );
        ends(
            &md,
            "MariaDB drain ÷ the store's own",
            "| — | 0.80× | reported |",
        );
        ends(
            &md,
            "MariaDB drain, 5,000 pending ÷ 1,000 pending",
            "| ≥ 0.85× | 0.90× | met |",
        );
        assert!(md.contains("- **MariaDB:** MariaDB 10.11.9 at `mysql://root@127.0.0.1:3306`"));
        ends(
            &md,
            "| MariaDB | loop |",
            "| 4,000 | — | 3,000 | 2,400 | 0.60× |",
        );
        assert!(crate::invariants::broken(&results).is_empty());
    }

    #[test]
    fn number_formats() {
        assert_eq!(rate(1_234_567.4), "1,234,567");
        assert_eq!(rate(100.0), "100");
        assert_eq!(rate(99.94), "99.9");
        assert_eq!(ratio(0.5), "0.50×");
        assert_eq!(count(999), "999");
        assert_eq!(count(1_000), "1,000");
        assert_eq!(per_batch(201.0), "201");
        assert_eq!(per_batch(2.5), "2.50");
    }

    #[test]
    fn write_produces_the_report_and_both_plots() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("nested/report");
        write(&sample(), &out, "outbox-bench render results.json").unwrap();
        let report = std::fs::read_to_string(out.join("REPORT.md")).unwrap();
        assert!(report.contains("outbox-bench render results.json"));
        let claims = std::fs::read_to_string(out.join("claims.svg")).unwrap();
        let scale = std::fs::read_to_string(out.join("scale.svg")).unwrap();
        for svg in [&claims, &scale] {
            assert!(svg.starts_with("<svg"), "{svg}");
            assert!(svg.trim_end().ends_with("</svg>"));
            assert!(svg.contains("<polyline") && !svg.contains("no data"));
        }
        // Legend labels are drawn as SVG text, with no font files.
        assert!(claims.contains(">\nPostgreSQL optimized 5 ms\n</text>"));
        assert!(claims.contains(">\nSQLite optimized\n</text>"));
        assert!(scale.contains(">\nPostgreSQL pending backlog\n</text>"));
    }
}
