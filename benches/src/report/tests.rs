//! The report's tests: known figures in, the judged table and plots out.

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
    {"engine": "sqlite", "path": "optimized", "per_call": 1000, "entries": 50000, "seconds": 2.0, "entries_per_s": 25000.0},
    {"engine": "postgres", "path": "optimized", "per_call": 1000, "entries": 50000, "seconds": 0.4, "entries_per_s": 125000.0, "payload_bytes": 64}
  ],
  "copies": [
    {"engine": "postgres", "method": "psql \\copy, CSV", "entries": 50000, "payload_bytes": 64, "seconds": 0.25, "entries_per_s": 200000.0}
  ],
  "ceilings": [
    {"engine": "postgres", "method": "pgbench", "backlog": 100000, "batch": 100, "clients": 2, "raw_rows_per_s": 10000.0, "raw_cpu_us_per_entry": 10.0, "raw_server_cpu_us_per_entry": 30.0, "drain": {"delivered": 100000, "seconds": 1.0, "entries_per_s": 9500.0, "peak_rss_mib": 30.0, "cpu_us_per_entry": 4.5, "server_cpu_us_per_entry": 36.0}, "round_ratios": [0.9, 0.95, 1.0]}
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
fn cpu_per_entry_is_shown_beside_the_rates_and_judged() {
    let md = markdown(&sample(), "outbox-bench run --quick");
    // 36 µs of server CPU per entry under the drain against 30 under pgbench: 1.20×.
    ends(
        &md,
        "Server CPU per entry, PostgreSQL drain",
        "| < 1.10× | 1.20× | **missed** |",
    );
    ends(&md, "Drain process CPU per entry", "| < 5.0 | 4.5 | met |");
    // The ceiling's row carries every round's ratio, both loops' CPU and their ratio.
    ends(
        &md,
        "| PostgreSQL | pgbench |",
        "| 0.95× | 0.90×, 0.95×, 1.00× | 10.0 | 30.0 | 4.5 | 36.0 | 1.20× |",
    );
    // A drain row without CPU figures (an older run) shows dashes.
    ends(
        &md,
        "| PostgreSQL | portable | 1 | 100 | 1 |",
        "| 4,250 | — | — | 20.0 | — |",
    );
    // 125,000 entries/s enqueued against 200,000 loaded by psql: 0.62×.
    ends(
        &md,
        "| PostgreSQL | psql \\copy, CSV |",
        "| 200,000 | 0.62× |",
    );
    ends(
        &md,
        "Bulk enqueue ÷ `psql \\copy`",
        "| ≥ 0.80× | 0.62× | **missed** |",
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
        "| 85,000 | — | — | 20.0 | 20.00× |",
    );
    ends(
        &md,
        "| pending-1m |",
        "| 10,000 | 15,000 | — | — | 0.75× | — | — | — | 50.0 |",
    );
    ends(
        &md,
        "| pending-1m-analyzed |",
        "| 10,000 | 14,400 | — | — | 0.90× | 0.96× | — | — | 50.0 |",
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
    assert_eq!(unmeasured.count(), 78, "{empty}");
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
        {"engine": "mariadb", "path": "portable", "workers": 1, "batch": 100, "latency_ms": 0, "backlog": 240, "outcome": {"delivered": 200, "seconds": 1.0, "entries_per_s": 250.0, "peak_rss_mib": 20.0, "table_delivered": 200, "cpu_us_per_entry": 9.0, "server_cpu_us_per_entry": 100.0}},
        {"engine": "mariadb", "path": "optimized", "workers": 1, "batch": 100, "latency_ms": 0, "backlog": 240, "outcome": {"delivered": 200, "seconds": 1.0, "entries_per_s": 2000.0, "peak_rss_mib": 20.0, "table_delivered": 200, "cpu_us_per_entry": 9.0, "server_cpu_us_per_entry": 100.0}}
      ],
      "ceilings": [
        {"engine": "mariadb", "method": "loop", "backlog": 2000, "batch": 100, "clients": 1, "raw_rows_per_s": 4000.0, "store_rows_per_s": 3000.0, "raw_delivered": 2000, "raw_cpu_us_per_entry": 10.0, "raw_server_cpu_us_per_entry": 100.0, "drain": {"delivered": 2000, "seconds": 1.0, "entries_per_s": 2400.0, "peak_rss_mib": 30.0, "cpu_us_per_entry": 18.0, "server_cpu_us_per_entry": 125.0}}
      ],
      "scale": [
        {"engine": "mariadb", "case": "pending-5k", "description": "5k", "pending": 5000, "drain": {"delivered": 500, "seconds": 1.0, "entries_per_s": 1800.0, "peak_rss_mib": 22.0, "cpu_us_per_entry": 9.0}},
        {"engine": "mariadb", "case": "pending-1k", "description": "1k", "pending": 1000, "drain": {"delivered": 500, "seconds": 1.0, "entries_per_s": 2000.0, "peak_rss_mib": 22.0, "cpu_us_per_entry": 9.0}}
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
        "| 4,000 | — | 3,000 | 2,400 | 0.60× | — | 10.0 | 100.0 | 18.0 | 125.0 | 1.25× |",
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
