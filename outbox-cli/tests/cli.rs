//! The real `outbox` binary against SQLite files.

use std::path::Path;
use std::process::Command;

use assert_cmd::cargo::CommandCargoExt;

mod common;

use common::{emissions, fails, ok, webhook_server, Db};

fn outbox(db: &Path) -> Command {
    Db::sqlite(db).cmd()
}

fn stats(db: &Path) -> serde_json::Value {
    Db::sqlite(db).stats()
}

fn migrated(dir: &tempfile::TempDir) -> std::path::PathBuf {
    let db = dir.path().join("outbox.db");
    ok(outbox(&db).arg("migrate"));
    db
}

#[test]
fn migrate_enqueue_drain_and_stats() {
    let dir = tempfile::tempdir().unwrap();
    let db = migrated(&dir);
    assert!(ok(outbox(&db).args(["migrate", "--print"])).contains("CREATE TABLE"));
    ok(outbox(&db).args([
        "enqueue",
        "--count",
        "1200",
        "--batch",
        "500",
        "--payload-bytes",
        "100",
    ]));
    let before = stats(&db);
    assert_eq!(before["counts"]["pending"], 1200);
    assert_eq!(before["counts"]["delivered"], 0);
    let jsonl = dir.path().join("out.jsonl");
    let out = ok(outbox(&db)
        .args(["drain", "--until-empty", "--workers", "3", "--emitter"])
        .arg(format!("jsonl:{}", jsonl.display())));
    assert!(out.contains("delivered 1200"), "{out}");
    let after = stats(&db);
    assert_eq!(after["counts"]["delivered"], 1200);
    assert_eq!(after["counts"]["pending"], 0);
    assert!(
        after["cleanup"].is_null(),
        "SQLite keeps no dead rows: {after}"
    );
    // The live picture (the default) counts SQLite's delivered rows exactly, by the row
    // count its triggers keep, and leaves the claims made out; `--exact` sums them.
    assert_eq!(after["delivered_estimated"], false, "{after}");
    assert!(after["claims_made"].is_null(), "{after}");
    let exact = Db::sqlite(&db).exact_stats();
    assert_eq!(exact["counts"], after["counts"]);
    assert!(
        exact["claims_made"].as_u64().is_some_and(|n| n >= 1200),
        "{exact}"
    );
    let text = ok(outbox(&db).arg("stats"));
    assert!(!text.contains("claims made"), "{text}");
    assert!(ok(outbox(&db).args(["stats", "--exact"])).contains("claims made"));
    let seen = emissions(&jsonl);
    assert_eq!(seen.len(), 1200);
    assert!(
        seen.values().all(|owners| owners.len() == 1),
        "an entry was emitted twice"
    );
}

/// A schema rolled back with `migrate --down-to` keeps its entries: this release refuses
/// it, saying to migrate, until `migrate` brings it back, and then drains every entry.
#[test]
fn migrate_down_to_keeps_the_entries_and_migrate_brings_the_schema_back() {
    let dir = tempfile::tempdir().unwrap();
    let db = migrated(&dir);
    let latest = outbox_sqlite::required_version();
    ok(outbox(&db).args(["enqueue", "--count", "300"]));
    let out = ok(outbox(&db).args(["migrate", "--down-to", "1"]));
    assert!(out.contains("is at version 1"), "{out}");
    fails(outbox(&db).arg("stats"), "outbox migrate");
    fails(
        outbox(&db).args(["migrate", "--down-to=99"]),
        "between 0 and",
    );
    let out = ok(outbox(&db).arg("migrate"));
    assert!(out.contains(&format!("is at version {latest}")), "{out}");
    assert_eq!(stats(&db)["counts"]["pending"], 300);
    let out = ok(outbox(&db).args(["drain", "--until-empty", "--emitter", "noop"]));
    assert!(out.contains("delivered 300"), "{out}");
}

/// A drain running when a later release's migration contracts the schema past this one
/// stops within its check interval with exit code 5, saying why.
#[test]
fn a_drain_stops_with_exit_5_when_the_schema_contracts_past_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = migrated(&dir);
    ok(outbox(&db).args(["enqueue", "--count", "50"]));
    let mut drain = outbox(&db)
        .args([
            "drain",
            "--emitter",
            "noop",
            "--schema-check-interval",
            "1s",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while stats(&db)["counts"]["delivered"] != 50 {
        assert!(started.elapsed().as_secs() < 60, "not drained");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // What a later release's contracting migration records.
    record_a_contracting_migration(&db, outbox_sqlite::required_version() + 1);
    let status = loop {
        if let Some(status) = drain.try_wait().unwrap() {
            break status;
        }
        assert!(started.elapsed().as_secs() < 90, "the drain did not stop");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(drain.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(5), "{stderr}");
    assert!(stderr.contains("finish the rollout"), "{stderr}");
}

/// Records migration `version` in the SQLite file's bookkeeping as a later release's
/// contracting migration does: it runs only stores of its own version.
fn record_a_contracting_migration(db: &Path, version: i64) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let pool = outbox_sqlite::SqliteClaimStore::open_pool(
            db.to_str().unwrap(),
            &outbox_sqlite::SqliteStoreConfig::new(),
        )
        .await
        .unwrap();
        sqlx::query(
            "INSERT INTO outbox_migrations (version, name, applied_at, oldest_compatible, \
             checksum) VALUES (?1, 'contracted', 0, ?1, 'x')",
        )
        .bind(version)
        .execute(&pool)
        .await
        .unwrap();
        pool.close().await;
    });
}

#[test]
fn the_portable_store_drains_the_same_table() {
    let dir = tempfile::tempdir().unwrap();
    let db = migrated(&dir);
    ok(outbox(&db).args(["--store", "portable", "enqueue", "--count", "300"]));
    ok(outbox(&db).args(["enqueue", "--count", "300"]));
    let out = ok(outbox(&db).args([
        "--store",
        "portable",
        "drain",
        "--until-empty",
        "--workers",
        "3",
        "--emitter",
        "noop",
    ]));
    assert!(out.contains("delivered 600"), "{out}");
    let after: serde_json::Value = serde_json::from_str(&ok(
        outbox(&db).args(["--store", "portable", "stats", "--json"])
    ))
    .unwrap();
    assert_eq!(after["counts"]["delivered"], 600);
}

#[test]
fn bad_input_is_one_clear_line_and_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let db = migrated(&dir);
    fails(
        outbox(&db).args(["drain", "--workers", "0", "--emitter", "noop"]),
        "--workers",
    );
    fails(
        outbox(&db).args(["drain", "--batches-ahead", "9", "--emitter", "noop"]),
        "--batches-ahead",
    );
    fails(
        outbox(&db).args(["drain", "--lease", "5 minutes", "--emitter", "noop"]),
        "not a duration",
    );
    fails(
        outbox(&db).args(["drain", "--emitter", "kafka:x"]),
        "emitter",
    );
    fails(
        outbox(&db).args(["prune", "--delivered-older-than", "0s"]),
        "longer than zero",
    );
    fails(
        outbox(&db).args(["dead-letters", "requeue", "--id", "nope"]),
        "not a UUID",
    );
    fails(
        Command::cargo_bin("outbox")
            .unwrap()
            .args(["--database-url", "oracle://x/y", "stats"]),
        "unsupported scheme",
    );
    let missing = dir.path().join("never-created.db");
    fails(outbox(&missing).arg("stats"), "not migrated");
    assert!(!missing.exists(), "a read command created a database file");
    let empty = dir.path().join("empty.db");
    std::fs::File::create(&empty).unwrap();
    fails(outbox(&empty).arg("stats"), "not migrated");
    fails(
        outbox(&db).args(["--table", "Bad-Name", "stats"]),
        "table name",
    );
    // PostgreSQL's settings and a server pool's size mean nothing to a SQLite file.
    for flags in [
        &["--statement-mode", "unnamed"][..],
        &["--no-listen"][..],
        &["--listen-url", "postgres://x@127.0.0.1/db"][..],
        &["--pool-size", "4"][..],
    ] {
        fails(
            outbox(&db).args(flags).args(["drain", "--emitter", "noop"]),
            flags[0],
        );
    }
    fails(
        outbox(&db).args(["--statement-mode", "sometimes", "stats"]),
        "--statement-mode",
    );
    fails(
        outbox(&db).args(["--pool-size", "0", "stats"]),
        "--pool-size",
    );
    fails(
        outbox(&db).args(["--no-listen", "--listen-url", "postgres://x@h/db", "stats"]),
        "--no-listen",
    );
    assert_eq!(
        stats(&db)["counts"]["pending"],
        0,
        "a refused command changed something"
    );
}

#[test]
fn webhook_rejections_become_dead_letters_an_operator_can_requeue_and_purge() {
    let dir = tempfile::tempdir().unwrap();
    let db = migrated(&dir);
    ok(outbox(&db).args(["enqueue", "--count", "3"]));
    let (url, keys) = webhook_server(422, None, "idempotency-key");
    let out = ok(outbox(&db)
        .args(["drain", "--until-empty", "--emitter"])
        .arg(format!("webhook:{url}")));
    assert!(out.contains("dead-lettered 3"), "{out}");
    let list: serde_json::Value =
        serde_json::from_str(&ok(outbox(&db).args(["dead-letters", "list", "--json"]))).unwrap();
    let ids: Vec<String> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids.len(), 3);
    let mut sent = keys.lock().unwrap().clone();
    sent.sort();
    let mut expected = ids.clone();
    expected.sort();
    assert_eq!(sent, expected, "the Idempotency-Key is the entry id");
    assert!(
        ok(outbox(&db).args(["dead-letters", "requeue", "--id", &ids[0]]))
            .contains("requeued 1 dead letter\n")
    );
    assert_eq!(stats(&db)["counts"]["pending"], 1);
    fails(
        outbox(&db).args(["dead-letters", "purge", "--all"]),
        "--yes",
    );
    assert!(ok(outbox(&db).args(["dead-letters", "purge", "--all", "--yes"])).contains("purged 2"));
    assert_eq!(stats(&db)["counts"]["dead_lettered"], 0);
}

#[test]
fn webhook_throttling_defers_and_server_errors_retry() {
    let dir = tempfile::tempdir().unwrap();
    let db = migrated(&dir);
    ok(outbox(&db).args(["enqueue", "--count", "2"]));
    let (url, _) = webhook_server(429, Some(3600), "idempotency-key");
    ok(outbox(&db)
        .args(["drain", "--until-empty", "--emitter"])
        .arg(format!("webhook:{url}")));
    assert_eq!(stats(&db)["counts"]["deferred"], 2);
    let dir2 = tempfile::tempdir().unwrap();
    let db2 = migrated(&dir2);
    ok(outbox(&db2).args(["enqueue", "--count", "2"]));
    // A 500 is the entry's (a 502 is the route's: a gateway saying the receiver is down).
    let (url, _) = webhook_server(500, None, "idempotency-key");
    ok(outbox(&db2)
        .args(["drain", "--until-empty", "--max-attempts", "5", "--emitter"])
        .arg(format!("webhook:{url}")));
    assert_eq!(stats(&db2)["counts"]["retryable_failure"], 2);
}

/// With `OUTBOX_WEBHOOK_SECRETS` each request is signed (one `v1,` signature per secret);
/// a secret that is not `whsec_` and a key is refused before anything is claimed.
#[test]
fn webhook_secrets_sign_each_request_and_a_bad_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = migrated(&dir);
    ok(outbox(&db).args(["enqueue", "--count", "2"]));
    let (url, signatures) = webhook_server(204, None, "webhook-signature");
    fails(
        outbox(&db)
            .env("OUTBOX_WEBHOOK_SECRETS", "not-a-secret")
            .args(["drain", "--until-empty", "--emitter"])
            .arg(format!("webhook:{url}")),
        "OUTBOX_WEBHOOK_SECRETS: invalid webhook secret",
    );
    assert!(signatures.lock().unwrap().is_empty());
    assert_eq!(stats(&db)["counts"]["pending"], 2, "nothing was claimed");
    // Two 32-byte keys, as a receiver's library would print them.
    let secrets = format!(
        "whsec_{} whsec_{}",
        "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=",
        "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWY="
    );
    ok(outbox(&db)
        .env("OUTBOX_WEBHOOK_SECRETS", secrets)
        .args(["drain", "--until-empty", "--emitter"])
        .arg(format!("webhook:{url}")));
    let signatures = signatures.lock().unwrap().clone();
    assert_eq!(signatures.len(), 2, "{signatures:?}");
    for signature in &signatures {
        let parts: Vec<&str> = signature.split(' ').collect();
        assert_eq!(parts.len(), 2, "{signature}");
        assert!(parts.iter().all(|p| p.starts_with("v1,")), "{signature}");
    }
    assert_eq!(stats(&db)["counts"]["delivered"], 2);
}

#[test]
fn the_demo_runs_and_checks_itself() {
    let dir = tempfile::tempdir().unwrap();
    let out = ok(Command::cargo_bin("outbox")
        .unwrap()
        .args(["demo", "--orders", "500", "--workers", "3", "--dir"])
        .arg(dir.path()));
    assert!(out.contains("emitted exactly once"), "{out}");
}

#[test]
fn drain_processes_with_one_killed_deliver_everything() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::sqlite(&dir.path().join("outbox.db"));
    common::drain_processes_with_one_killed_deliver_everything(&db, dir.path());
}

#[test]
fn ordered_drain_processes_with_one_killed_keep_each_key_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::sqlite(&dir.path().join("outbox.db"));
    common::ordered_killed::ordered_drain_processes_with_one_killed_keep_each_key_in_order(
        &db,
        dir.path(),
    );
}

/// Two drains over the two halves of a table, each until its half is empty, deliver every
/// entry once between them, each in its own slice.
#[test]
fn drains_over_slices_split_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let db = migrated(&dir);
    for key in 0..10 {
        ok(outbox(&db).args([
            "enqueue",
            "--count",
            "4",
            "--partition-key",
            &format!("k{key}"),
        ]));
    }
    let mut seen = std::collections::HashSet::new();
    for index in 0..2 {
        let jsonl = dir.path().join(format!("slice-{index}.jsonl"));
        ok(outbox(&db)
            .args(["drain", "--until-empty", "--slice", &format!("{index}/2")])
            .arg("--emitter")
            .arg(format!("jsonl:{}", jsonl.display())));
        let slice = outbox_core::Slice::new(index, 2).unwrap();
        for line in std::fs::read_to_string(&jsonl).unwrap().lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let id: outbox_core::EntryId = v["id"].as_str().unwrap().parse().unwrap();
            assert!(slice.contains(v["partition_key"].as_str(), id), "{line}");
            assert!(seen.insert(id), "emitted by both slices: {line}");
        }
    }
    assert_eq!(seen.len(), 40);
    assert_eq!(stats(&db)["counts"]["delivered"], 40);
}

/// `drain --ordered` needs a table prepared with `migrate --ordered`; on one, three
/// workers deliver every key's entries in the order they were written.
#[test]
fn an_ordered_drain_needs_migrate_ordered_and_keeps_each_keys_order() {
    let dir = tempfile::tempdir().unwrap();
    let db = migrated(&dir);
    for key in ["a", "b", "c"] {
        for n in 0..50 {
            ok(outbox(&db).args([
                "enqueue",
                "--partition-key",
                key,
                "--payload",
                &format!("{{\"n\":{n}}}"),
            ]));
        }
    }
    let jsonl = dir.path().join("out.jsonl");
    let drain = |db: &Path| {
        let mut cmd = outbox(db);
        cmd.args(["drain", "--until-empty", "--ordered", "--workers", "3"])
            .arg("--emitter")
            .arg(format!("jsonl:{}", jsonl.display()));
        cmd
    };
    fails(&mut drain(&db), "outbox migrate --ordered");
    assert_eq!(
        stats(&db)["counts"]["pending"],
        150,
        "the refused drain took entries"
    );

    assert!(
        ok(outbox(&db).args(["migrate", "--print", "--ordered"])).contains("_ordered_pending_idx")
    );
    assert!(ok(outbox(&db).args(["migrate", "--ordered"]))
        .contains("prepared for claims in per-key order"));
    ok(&mut drain(&db));
    assert_eq!(stats(&db)["counts"]["delivered"], 150);
    let mut last: std::collections::HashMap<String, i64> = Default::default();
    for line in std::fs::read_to_string(&jsonl).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let payload: serde_json::Value =
            serde_json::from_str(v["payload"].as_str().unwrap()).unwrap();
        let n = payload["n"].as_i64().unwrap();
        let key = v["partition_key"].as_str().unwrap().to_owned();
        if let Some(before) = last.insert(key.clone(), n) {
            assert!(n > before, "key {key}: entry {n} emitted after {before}");
        }
    }
    assert_eq!(last.len(), 3);
}
