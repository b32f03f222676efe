//! The command as an operator meets it, through the real binary on SQLite files: the
//! README's block as written, explicit emitters, unambiguous durations, a clean stdout
//! stream, honest summaries and exit codes.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;

mod common;

use common::{fails_with, ok, webhook_server, Db};

fn outbox(db: &Path) -> Command {
    Db::sqlite(db).cmd()
}

fn migrated(dir: &tempfile::TempDir) -> std::path::PathBuf {
    let db = dir.path().join("outbox.db");
    ok(outbox(&db).arg("migrate"));
    db
}

/// The lines of the README's "Operating it" block.
fn readme_block() -> Vec<String> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README.md");
    let section = readme
        .split("## Operating it")
        .nth(1)
        .expect("an Operating it section");
    section
        .lines()
        .skip_while(|l| !l.starts_with("    "))
        .take_while(|l| l.starts_with("    "))
        .map(|l| l.split(" #").next().unwrap_or("").trim().to_owned())
        .collect()
}

#[test]
fn the_readme_block_runs_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let lines = readme_block();
    assert!(lines.len() >= 5, "{lines:?}");
    let mut env: Vec<(String, String)> = Vec::new();
    for line in &lines {
        if let Some(assignment) = line.strip_prefix("export ") {
            let (key, value) = assignment.split_once('=').expect("KEY=VALUE");
            env.push((key.to_owned(), value.to_owned()));
            continue;
        }
        let mut words = line.split_whitespace();
        assert_eq!(words.next(), Some("outbox"), "{line}");
        let mut cmd = Command::cargo_bin("outbox").unwrap();
        cmd.current_dir(dir.path())
            .env_remove("OUTBOX_DATABASE_URL")
            .envs(env.iter().map(|(k, v)| (k, v)))
            .args(words)
            .stdin(Stdio::null());
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{line}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // Every line used the exported database, none the default file.
    assert!(dir.path().join("app.db").exists());
    assert!(!dir.path().join("outbox.db").exists());
    let jsonl = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    assert_eq!(jsonl.lines().count(), 10_000);
}

#[test]
fn drain_needs_an_explicit_emitter() {
    let dir = tempfile::tempdir().unwrap();
    let db = migrated(&dir);
    ok(outbox(&db).args(["enqueue", "--count", "5"]));
    fails_with(outbox(&db).args(["drain", "--until-empty"]), 2, "--emitter");
    let stats = Db::sqlite(&db).stats();
    assert_eq!(stats["counts"]["pending"], 5, "entries were touched");
    let out = ok(outbox(&db).args(["drain", "--until-empty", "--emitter", "noop"]));
    assert!(out.contains("delivered 5"), "{out}");
}

#[test]
fn durations_need_a_unit_and_bad_values_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let db = migrated(&dir);
    fails_with(
        outbox(&db).args(["prune", "--delivered-older-than", "7"]),
        2,
        "no unit",
    );
    fails_with(
        outbox(&db).args(["drain", "--lease", "30", "--emitter", "noop"]),
        2,
        "no unit",
    );
    fails_with(
        outbox(&db).args(["drain", "--lease", "400d", "--emitter", "noop"]),
        2,
        "lease",
    );
    for bad in ["0s", "2h", "10"] {
        fails_with(
            outbox(&db).args(["--call-timeout", bad, "stats"]),
            2,
            "--call-timeout",
        );
    }
    fails_with(
        outbox(&db).args(["enqueue", "--count", "1", "--payload-bytes", "99999999"]),
        2,
        "--payload-bytes",
    );
}

#[test]
fn schema_on_sqlite_is_refused_plainly() {
    let dir = tempfile::tempdir().unwrap();
    let db = migrated(&dir);
    fails_with(
        outbox(&db).args(["--schema", "app", "stats"]),
        2,
        "SQLite has no schemas",
    );
}

#[test]
fn a_lease_shorter_than_an_emission_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = migrated(&dir);
    ok(outbox(&db).args(["enqueue", "--count", "3"]));
    let err = fails_with(
        outbox(&db).args([
            "drain",
            "--until-empty",
            "--emitter",
            "noop",
            "--lease",
            "10ms",
            "--emit-delay",
            "50ms",
        ]),
        2,
        "--emit-delay 50ms",
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!err.contains('\u{1b}'), "colour codes on a pipe: {err:?}");
    assert_eq!(Db::sqlite(&db).stats()["counts"]["pending"], 3);
    // Likewise an emission that could never finish within its timeout.
    fails_with(
        outbox(&db).args([
            "drain",
            "--until-empty",
            "--emitter",
            "noop",
            "--emit-delay",
            "50ms",
            "--emit-timeout",
            "20ms",
        ]),
        2,
        "--emit-timeout: 20ms",
    );
    fails_with(
        outbox(&db).args([
            "drain",
            "--until-empty",
            "--emitter",
            "noop",
            "--emit-timeout",
            "0s",
        ]),
        2,
        "must be longer than zero",
    );
    assert_eq!(Db::sqlite(&db).stats()["counts"]["pending"], 3);
}

#[test]
fn stdout_carries_only_entries_and_the_summary_can_be_json() {
    let dir = tempfile::tempdir().unwrap();
    let db = migrated(&dir);
    ok(outbox(&db).args(["enqueue", "--count", "20"]));
    let out = outbox(&db)
        .args(["drain", "--until-empty", "--emitter", "stdout", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 20, "{stdout}");
    for line in stdout.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("an entry per line");
        assert!(v["id"].is_string(), "{line}");
    }
    let stderr = String::from_utf8(out.stderr).unwrap();
    let summary: serde_json::Value = serde_json::from_str(stderr.trim()).expect("JSON summary");
    assert_eq!(summary["delivered"], 20);
    assert_eq!(summary["left"]["pending"], 0);
    assert!(summary["delivered_per_second"].as_f64().unwrap() > 0.0);
}

#[test]
fn outcomes_and_exit_codes_say_what_happened() {
    let dir = tempfile::tempdir().unwrap();
    let db = migrated(&dir);
    ok(outbox(&db).args(["enqueue", "--count", "2"]));
    let (url, types) = webhook_server(422, None, "content-type");
    let out = outbox(&db)
        .args([
            "drain",
            "--until-empty",
            "--fail-on-dead-letters",
            "--emitter",
        ])
        .arg(format!("webhook:{url}"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}");
    assert!(stdout.contains("left: pending 0"), "{stdout}");
    assert!(stdout.contains("dead letters 2"), "{stdout}");
    assert_eq!(
        *types.lock().unwrap(),
        ["application/octet-stream", "application/octet-stream"],
        "webhook requests carry a Content-Type"
    );
    let unknown = "0192f0c4-0000-7000-8000-000000000000";
    fails_with(
        outbox(&db).args(["dead-letters", "requeue", "--id", unknown]),
        1,
        "no dead letter with id",
    );
    let listed = ok(outbox(&db).args(["dead-letters", "list"]));
    assert!(
        listed.contains("error=HTTP 422"),
        "the list hides the error: {listed}"
    );
    let first = listed.split_whitespace().next().unwrap().to_owned();
    let shown: serde_json::Value =
        serde_json::from_str(&ok(outbox(&db).args(["show", &first, "--json"]))).unwrap();
    assert_eq!(shown["status"], "dead_lettered");
    assert!(
        shown["last_error"].as_str().unwrap().contains("422"),
        "{shown}"
    );
    assert!(ok(outbox(&db).args(["show", &first])).contains("dead_lettered"));
    fails_with(outbox(&db).args(["show", unknown]), 1, "no outbox entry");
    let out = ok(outbox(&db).args(["dead-letters", "requeue", "--all"]));
    assert_eq!(out.trim(), "requeued 2 dead letters");
    let out = ok(outbox(&db).args(["dead-letters", "list"]));
    assert_eq!(out.trim(), "no dead letters");
}

#[test]
fn a_second_signal_forces_the_stop() {
    let dir = tempfile::tempdir().unwrap();
    let db = migrated(&dir);
    ok(outbox(&db).args(["enqueue", "--count", "50"]));
    let mut child = outbox(&db)
        .args([
            "drain",
            "--emitter",
            "noop",
            "--emit-delay",
            "20s",
            "--lease",
            "2m",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the drain holds its first batch.
    let deadline = Instant::now() + Duration::from_secs(20);
    while Db::sqlite(&db).stats()["claims_in_flight"] == 0 {
        assert!(Instant::now() < deadline, "the drain never claimed");
        std::thread::sleep(Duration::from_millis(50));
    }
    let pid = child.id().to_string();
    let signal = |name: &str| {
        let status = Command::new("kill")
            .args(["-s", name, &pid])
            .status()
            .unwrap();
        assert!(status.success());
    };
    signal("INT");
    std::thread::sleep(Duration::from_millis(300));
    signal("INT");
    let started = Instant::now();
    let status = child.wait().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the forced stop waited"
    );
    assert_eq!(status.code(), Some(130));
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(stderr.contains("forced to stop"), "{stderr}");
}

#[test]
fn the_demo_refuses_a_database_url_it_would_not_use() {
    fails_with(
        Command::cargo_bin("outbox")
            .unwrap()
            .env_remove("OUTBOX_DATABASE_URL")
            .args(["--database-url", "sqlite://elsewhere.db", "demo"]),
        2,
        "--dir",
    );
}

#[test]
fn the_demo_reports_plainly_and_cleans_up() {
    let out = ok(Command::cargo_bin("outbox")
        .unwrap()
        .env_remove("OUTBOX_DATABASE_URL")
        .args(["demo", "--orders", "300"]));
    assert!(out.contains("emissions per worker: demo-"), "{out}");
    assert!(!out.contains("[(\""), "a debug list: {out}");
    assert!(out.contains("exactly once"), "{out}");
    let db = out
        .lines()
        .find_map(|l| l.strip_prefix("demo database: "))
        .and_then(|l| l.split(" (").next())
        .expect("the demo names its database");
    let dir = Path::new(db).parent().unwrap();
    assert!(!dir.exists(), "the demo left {} behind", dir.display());
}

#[test]
fn entries_are_listed_by_status_page_by_page_and_failed_ones_requeued() {
    let dir = tempfile::tempdir().unwrap();
    let db = migrated(&dir);
    ok(outbox(&db).args(["enqueue", "--count", "5", "--topic", "a"]));
    ok(outbox(&db).args(["enqueue", "--count", "2", "--topic", "b"]));
    let page = |extra: &[&str]| -> Vec<String> {
        let out = ok(outbox(&db)
            .args(["list", "--status", "pending", "--json"])
            .args(extra));
        let rows: serde_json::Value = serde_json::from_str(&out).unwrap();
        rows.as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let all = page(&["--limit", "100"]);
    assert_eq!(all.len(), 7);
    let first = page(&["--limit", "3"]);
    let second = page(&["--limit", "3", "--after", &first[2]]);
    let third = page(&["--limit", "3", "--after", &second[2]]);
    assert_eq!(
        [first, second, third].concat(),
        all,
        "pages do not follow on"
    );
    assert_eq!(page(&["--topic", "b"]).len(), 2);
    let text = ok(outbox(&db).args(["list", "--status", "pending", "--limit", "3"]));
    assert!(text.contains("next page: --after"), "{text}");
    assert_eq!(
        ok(outbox(&db).args(["list", "--status", "failed"])).trim(),
        "no failed entries"
    );
    fails_with(
        outbox(&db).args(["list", "--status", "stuck"]),
        2,
        "not a status",
    );
    fails_with(
        outbox(&db).args(["requeue", "--status", "pending", "--all"]),
        2,
        "do not wait for an operator",
    );
    fails_with(
        outbox(&db).args(["requeue", "--status", "failed", "--id", &all[0]]),
        1,
        "no failed entry with id",
    );
    let out = ok(outbox(&db).args(["requeue", "--status", "failed", "--all"]));
    assert_eq!(out.trim(), "requeued 0 failed entries (now pending)");
}

#[test]
fn destructive_commands_say_what_they_would_touch() {
    let dir = tempfile::tempdir().unwrap();
    let db = migrated(&dir);
    ok(outbox(&db).args(["enqueue", "--count", "4"]));
    ok(outbox(&db).args(["drain", "--until-empty", "--emitter", "noop"]));
    let out = ok(outbox(&db).args(["prune", "--delivered-older-than", "1ms", "--dry-run"]));
    assert!(
        out.starts_with("would prune 4 entries delivered before"),
        "{out}"
    );
    assert_eq!(
        Db::sqlite(&db).stats()["counts"]["delivered"],
        4,
        "a dry run deleted"
    );
    let out = ok(outbox(&db).args(["prune", "--delivered-older-than", "1ms"]));
    assert!(
        out.starts_with("pruned 4 entries delivered before"),
        "{out}"
    );
    ok(outbox(&db).args(["enqueue", "--count", "2"]));
    let (url, _) = webhook_server(400, None, "content-type");
    ok(outbox(&db)
        .args(["drain", "--until-empty", "--emitter"])
        .arg(format!("webhook:{url}")));
    fails_with(
        outbox(&db).args(["dead-letters", "purge", "--all"]),
        2,
        "would purge 2 dead letters; run again with --yes",
    );
    assert_eq!(Db::sqlite(&db).stats()["counts"]["dead_lettered"], 2);
    fails_with(
        outbox(&db).args(["purge", "--status", "dead_lettered", "--all"]),
        2,
        "would purge 2 dead letters; run again with --yes",
    );
    fails_with(
        outbox(&db).args(["purge", "--status", "pending", "--all", "--yes"]),
        2,
        "do not wait for an operator",
    );
    let unknown = "0192f0c4-0000-7000-8000-000000000000";
    fails_with(
        outbox(&db).args(["purge", "--status", "failed", "--id", unknown, "--yes"]),
        1,
        "no failed entry with id",
    );
    assert_eq!(Db::sqlite(&db).stats()["counts"]["dead_lettered"], 2);
    let out = ok(outbox(&db).args(["purge", "--status", "dead_lettered", "--all", "--yes"]));
    assert_eq!(out.trim(), "purged 2 dead letters");
    assert_eq!(Db::sqlite(&db).stats()["counts"]["dead_lettered"], 0);
}

/// Requeue, purge and list narrowed to one topic or one partition key touch and show only
/// those entries; a blank topic is refused and changes nothing.
#[test]
fn one_topic_is_requeued_and_purged_and_one_key_listed() {
    let dir = tempfile::tempdir().unwrap();
    let db = migrated(&dir);
    ok(outbox(&db).args([
        "enqueue",
        "--count",
        "2",
        "--topic",
        "a",
        "--partition-key",
        "ka",
    ]));
    ok(outbox(&db).args([
        "enqueue",
        "--count",
        "3",
        "--topic",
        "b",
        "--partition-key",
        "kb",
    ]));
    let (url, _) = webhook_server(400, None, "content-type");
    ok(outbox(&db)
        .args(["drain", "--until-empty", "--emitter"])
        .arg(format!("webhook:{url}")));
    fails_with(
        outbox(&db).args(["purge", "--status", "dead_lettered", "--topic", "a"]),
        2,
        "would purge 2 dead letters; run again with --yes",
    );
    fails_with(
        outbox(&db).args(["dead-letters", "requeue", "--topic", " "]),
        2,
        "topic",
    );
    fails_with(
        outbox(&db).args(["purge", "--status", "dead_lettered", "--topic", " "]),
        2,
        "topic",
    );
    fails_with(
        outbox(&db).args(["dead-letters", "requeue", "--topic", "b", "--all"]),
        2,
        "cannot be used with",
    );
    assert_eq!(Db::sqlite(&db).stats()["counts"]["dead_lettered"], 5);
    let out = ok(outbox(&db).args(["dead-letters", "requeue", "--topic", "b"]));
    assert_eq!(out.trim(), "requeued 3 dead letters");
    let listed = ok(outbox(&db).args(["list", "--status", "pending", "--partition-key", "kb"]));
    assert_eq!(
        listed.lines().filter(|l| l.contains("  b  ")).count(),
        3,
        "{listed}"
    );
    let none = ok(outbox(&db).args(["list", "--status", "pending", "--partition-key", "ka"]));
    assert_eq!(none.trim(), "no pending entries");
    let out = ok(outbox(&db).args([
        "purge",
        "--status",
        "dead_lettered",
        "--topic",
        "a",
        "--yes",
    ]));
    assert_eq!(out.trim(), "purged 2 dead letters");
    let counts = &Db::sqlite(&db).stats()["counts"];
    assert_eq!(
        (&counts["dead_lettered"], &counts["pending"]),
        (&serde_json::json!(0), &serde_json::json!(3))
    );
}

/// HTTPS webhooks work in the default build: an https:// URL is accepted, and a server
/// that does not speak TLS makes a route failure (held), not a refusal to start.
#[test]
fn https_webhooks_are_in_the_default_build() {
    let dir = tempfile::tempdir().unwrap();
    let db = migrated(&dir);
    ok(outbox(&db).args(["enqueue", "--count", "1"]));
    let (url, _) = webhook_server(200, None, "content-type");
    let url = url.replacen("http://", "https://", 1);
    // The TLS handshake with a plain-HTTP server fails: the route's fault (the entry is
    // held), after a TLS attempt, which a build without TLS would not make.
    let held = common::held_for_a_route(&Db::sqlite(&db), &format!("webhook:{url}"));
    assert_eq!(
        (&held["kind"], &held["entries"]),
        (&"unreachable".into(), &1.into()),
        "{held}"
    );
    let error = held["last_error"].as_str().unwrap_or_default();
    assert!(error.contains("cannot connect"), "{error}");
    assert!(!error.contains("scheme"), "https was not built in: {error}");
}

/// A worker killed mid-batch leaves leases behind; `drain --until-empty` says it is
/// waiting for them instead of sitting silent, then delivers everything.
#[test]
fn until_empty_says_it_waits_for_a_dead_workers_leases() {
    let dir = tempfile::tempdir().unwrap();
    let db = migrated(&dir);
    ok(outbox(&db).args(["enqueue", "--count", "10"]));
    let mut doomed = outbox(&db)
        .args([
            "drain",
            "--emitter",
            "noop",
            "--emit-delay",
            "1500ms",
            "--lease",
            "2s",
            "--batch",
            "4",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while Db::sqlite(&db).stats()["claims_in_flight"] == 0 {
        assert!(Instant::now() < deadline, "the doomed drain never claimed");
        std::thread::sleep(Duration::from_millis(50));
    }
    doomed.kill().unwrap();
    doomed.wait().unwrap();
    let out = outbox(&db)
        .args(["drain", "--until-empty", "--emitter", "noop"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("held by other workers"), "{stderr}");
    assert_eq!(Db::sqlite(&db).stats()["counts"]["delivered"], 10);
}

/// A database opened read-only can still be inspected; writes fail plainly.
#[test]
fn a_read_only_database_can_be_inspected() {
    let dir = tempfile::tempdir().unwrap();
    let db = migrated(&dir);
    ok(outbox(&db).args(["enqueue", "--count", "3"]));
    let read_only = Db(vec![
        "--database-url".into(),
        format!("sqlite://{}?mode=ro", db.display()),
    ]);
    let stats: serde_json::Value =
        serde_json::from_str(&ok(read_only.cmd().args(["stats", "--json"]))).unwrap();
    assert_eq!(stats["counts"]["pending"], 3);
    ok(read_only.cmd().args(["list", "--status", "pending"]));
    ok(read_only.cmd().args(["dead-letters", "list"]));
    ok(read_only
        .cmd()
        .args(["prune", "--delivered-older-than", "1d", "--dry-run"]));
    fails_with(
        read_only.cmd().args(["enqueue", "--count", "1"]),
        1,
        "readonly",
    );
}

/// `enqueue` takes a real payload (text or @file), headers and a partition key.
#[test]
fn enqueue_takes_a_real_payload_headers_and_a_partition_key() {
    let dir = tempfile::tempdir().unwrap();
    let db = migrated(&dir);
    let out = ok(outbox(&db).args([
        "enqueue",
        "--topic",
        "orders.created",
        "--payload",
        r#"{"order":7}"#,
        "--header",
        "content-type=application/json",
        "--partition-key",
        "customer-1",
    ]));
    assert_eq!(out.trim(), r#"enqueued 1 entry on topic "orders.created""#);
    let file = dir.path().join("body.bin");
    std::fs::write(&file, [0u8, 159, 146, 150]).unwrap();
    ok(outbox(&db)
        .args(["enqueue", "--topic", "blobs", "--payload"])
        .arg(format!("@{}", file.display())));
    let listed: serde_json::Value = serde_json::from_str(&ok(
        outbox(&db).args(["list", "--status", "pending", "--json"])
    ))
    .unwrap();
    let rows = listed.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["payload"]["text"], r#"{"order":7}"#);
    assert_eq!(rows[0]["headers"]["content-type"], "application/json");
    assert_eq!(rows[0]["partition_key"], "customer-1");
    assert_eq!(rows[1]["payload"]["hex"], "009f9296");
    fails_with(
        outbox(&db).args(["enqueue", "--header", "no-equals-sign"]),
        2,
        "NAME=VALUE",
    );
    fails_with(
        outbox(&db).args(["enqueue", "--payload", "@/no/such/file"]),
        2,
        "cannot read",
    );
}
