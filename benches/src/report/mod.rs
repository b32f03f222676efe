//! The run's report: `REPORT.md` (targets first, then every measured table) beside two SVG
//! plots, all rebuilt from a [`Results`] alone.

mod ceiling_split;
mod format;
mod plot;
mod ratios;
mod tables;
mod targets;

use std::collections::BTreeSet;
use std::io;
use std::path::Path;

use crate::scenarios::scale::ANALYZED;

use format::*;
use ratios::*;

use crate::results::{
    BrokerCeilingRow, CeilingRow, ClaimRow, CopyRow, CostRow, DrainRow, Engine, EnqueueRow,
    FlowRow, HeldRow, OverlapRow, ReadingRow, Results, ScaleRow, SoakRow, StorePath,
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
    targets::render(&mut md, results);
    tables::cost_model(&mut md, results);
    tables::all(&mut md, results);
    md.push_str(READING);
    md
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
PostgreSQL).\n\
- CPU per entry is the CPU time spent over a run divided by the entries it delivered, read \
from `/proc` (clock ticks of 10 ms, so short runs are coarse): \"CPU\" is the drain's own \
process; \"server CPU\" is every process of the PostgreSQL cluster or MariaDB's one \
process, over the same run (a dash on SQLite, which works inside the drain's process). \
Where throughput is shared between the drain and its server on the same cores, these \
show what an entry costs each side. Behind added latency the drain's process also runs \
the latency proxy, whose CPU is in its figure.\n";

#[cfg(test)]
mod tests;
