//! `drain --metrics-addr` serves Prometheus text whose numbers agree with the drain's own
//! summary; `--log-format json` writes one JSON object per log line.

use std::io::Read;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::scrape::{free_port, scrape, value};
use common::{ok, Db};
use outbox_testkit::postgres::PgTestDb;

fn outbox(db: &Path) -> Command {
    Db::sqlite(db).cmd()
}

#[test]
fn metrics_are_served_during_a_drain_and_agree_with_its_summary() {
    let dir = tempfile::tempdir().unwrap();
    metrics_agree_with_the_summary(&Db::sqlite(&dir.path().join("outbox.db")));
}

/// On PostgreSQL the drain claims batches ahead and takes them in while the one before
/// still runs: every batch it takes counts in `outbox_batch_size`, not only the first of
/// each cycle.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_agree_with_the_summary_on_postgres_where_batches_are_claimed_ahead() {
    let Some(pg) = PgTestDb::create().await else {
        return;
    };
    let db = Db::postgres(&pg.url, &pg.schema);
    tokio::task::spawn_blocking(move || metrics_agree_with_the_summary(&db))
        .await
        .unwrap();
}

fn metrics_agree_with_the_summary(db: &Db) {
    ok(db.cmd().arg("migrate"));
    ok(db.cmd().args(["enqueue", "--count", "300"]));
    let port = free_port();
    let mut child = db
        .cmd()
        .args([
            "drain",
            "--emitter",
            "noop",
            "--batch",
            "30",
            "--json",
            "--stats-interval",
            "100ms",
        ])
        .args(["--metrics-addr", &format!("127.0.0.1:{port}")])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();

    // Scraped while the drain runs (it runs until told to stop).
    let started = Instant::now();
    let body = loop {
        let body = scrape(port);
        let drained = value(&body, r#"outbox_emissions{result="delivered"}"#) == Some(300.0)
            && value(&body, r#"outbox_entries{status="pending"}"#) == Some(0.0)
            && value(&body, r#"outbox_entries{status="delivered"}"#) == Some(300.0);
        if drained {
            break body;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "never drained: {body}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let applied =
        r#"outbox_claim_transition_attempts{outcome="applied",durable_status="delivered"}"#;
    assert_eq!(value(&body, applied), Some(300.0), "{body}");
    assert_eq!(value(&body, "outbox_batch_size_sum"), Some(300.0), "{body}");
    assert!(
        value(&body, "outbox_batch_size_count") >= Some(10.0),
        "{body}"
    );
    assert_eq!(
        value(&body, "outbox_emit_latency_seconds_count"),
        Some(300.0)
    );
    assert!(value(&body, "outbox_claim_latency_seconds_count") >= Some(10.0));
    assert!(value(&body, "outbox_complete_latency_seconds_count") >= Some(1.0));
    assert_eq!(value(&body, "outbox_lost_renewals"), Some(0.0), "{body}");
    assert_eq!(value(&body, "outbox_failed_renewals"), Some(0.0), "{body}");
    assert_eq!(value(&body, "outbox_live_leases"), Some(0.0));
    assert_eq!(value(&body, "outbox_oldest_pending_age_seconds"), Some(0.0));

    let stopped = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(stopped.success());
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    assert!(child.wait().unwrap().success());
    let summary: serde_json::Value = serde_json::from_str(stdout.trim()).expect("a JSON summary");
    assert_eq!(summary["delivered"], 300, "{summary}");
    assert_eq!(summary["emitted"], 300, "{summary}");
}

#[test]
fn a_metrics_address_in_use_is_a_clear_failure() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("outbox.db");
    ok(outbox(&db).arg("migrate"));
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    common::fails_with(
        outbox(&db).args([
            "drain",
            "--until-empty",
            "--emitter",
            "noop",
            "--metrics-addr",
            &addr,
        ]),
        1,
        "cannot serve metrics",
    );
}

#[test]
fn json_logs_are_one_object_per_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("outbox.db");
    ok(outbox(&db).arg("migrate"));
    let out = outbox(&db)
        .args(["--log-format", "json", "stats"])
        .env("OUTBOX_LOG", "debug")
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(!lines.is_empty(), "no log lines at debug");
    for line in lines {
        let parsed: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}"));
        assert!(
            parsed["level"].is_string() && parsed["timestamp"].is_string(),
            "{line}"
        );
    }
}
