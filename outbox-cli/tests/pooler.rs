//! The real `outbox` binary through PgBouncer in transaction mode with two server
//! connections, the way most production PostgreSQL is reached: two drain processes
//! deliver every entry once; named statements fail with the setting that fixes them.

use std::process::Stdio;

use outbox_testkit::pgbouncer::{self, PgBouncer};
use outbox_testkit::postgres::PgTestDb;

mod common;

use common::{emissions, fails, ok, Db};

const ENTRIES: usize = 10_000;

/// A test's schema, migrated directly, the shared pooler in front of its server, and the
/// direct connection's options; `None` (reported loudly) without either.
async fn migrated() -> Option<(PgTestDb, &'static PgBouncer, Db)> {
    let pg = PgTestDb::create().await?;
    let bouncer = pgbouncer::shared().await?;
    let direct = Db::postgres(&pg.url, &pg.schema);
    ok(direct.cmd().arg("migrate"));
    Some((pg, bouncer, direct))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_drains_through_a_transaction_pooler_deliver_every_entry_once() {
    let Some((pg, bouncer, direct)) = migrated().await else {
        return;
    };
    // The statement mode from the URL for one command, from the flag for the others.
    let in_url = Db::postgres(
        &format!("{}?statement_mode=unnamed", bouncer.url),
        &pg.schema,
    );
    let pooled = Db::postgres(&bouncer.url, &pg.schema);
    ok(in_url
        .cmd()
        .args(["enqueue", "--count", &ENTRIES.to_string(), "--batch", "500"]));
    assert_eq!(in_url.stats()["counts"]["pending"], ENTRIES);

    let dir = tempfile::tempdir().unwrap();
    let files: Vec<_> = ["a", "b"]
        .iter()
        .map(|o| dir.path().join(format!("{o}.jsonl")))
        .collect();
    let drains: Vec<_> = ["a", "b"]
        .iter()
        .zip(&files)
        .map(|(owner, file)| {
            let listen: Vec<String> = if *owner == "a" {
                vec!["--listen-url".into(), pg.url.clone()]
            } else {
                vec!["--no-listen".into()]
            };
            pooled
                .cmd()
                .args(["--statement-mode", "unnamed"])
                .args(listen)
                .args(["drain", "--until-empty", "--workers", "2", "--owner", owner])
                .args(["--emitter", &format!("jsonl:{}", file.display())])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outputs: Vec<_> = tokio::task::spawn_blocking(move || {
        drains
            .into_iter()
            .map(|d| d.wait_with_output().unwrap())
            .collect()
    })
    .await
    .unwrap();
    for out in &outputs {
        assert!(
            out.status.success(),
            "a drain failed: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let b_stderr = String::from_utf8_lossy(&outputs[1].stderr);
    assert!(
        b_stderr.contains("--no-listen"),
        "no word of polling: {b_stderr}"
    );

    let mut seen = emissions(&files[0]);
    let from_a = seen.len();
    for (id, owners) in emissions(&files[1]) {
        seen.entry(id).or_default().extend(owners);
    }
    assert_eq!(seen.len(), ENTRIES, "an entry was never emitted");
    let twice: Vec<_> = seen.iter().filter(|(_, o)| o.len() > 1).collect();
    assert!(
        twice.is_empty(),
        "entries emitted more than once: {twice:?}"
    );
    assert!(
        from_a > 0 && from_a < ENTRIES,
        "one drain did all the work ({from_a} of {ENTRIES} by a)"
    );
    let stats = direct.exact_stats();
    assert_eq!(stats["counts"]["delivered"], ENTRIES, "{stats}");
    println!(
        "through the pooler: {from_a} delivered by a, {} by b",
        ENTRIES - from_a
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn named_statements_through_a_transaction_pooler_fail_with_the_fix() {
    let Some((pg, bouncer, direct)) = migrated().await else {
        return;
    };
    ok(direct.cmd().args(["enqueue", "--count", "500"]));
    let pooled = Db::postgres(&bouncer.url, &pg.schema);
    // Several workers share the pooler's two server connections: a statement prepared
    // on one is soon asked for on the other. The drain retries store errors for good, so
    // it is stopped after a while and its log read.
    let drain = pooled
        .cmd()
        .args([
            "drain",
            "--workers",
            "4",
            "--batch",
            "1",
            "--emitter",
            "noop",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_secs(5)).await;
    let stopped = std::process::Command::new("kill")
        .args(["-TERM", &drain.id().to_string()])
        .status()
        .unwrap();
    assert!(stopped.success());
    let out = tokio::task::spawn_blocking(move || drain.wait_with_output().unwrap())
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("prepared statement") && stderr.contains("--statement-mode unnamed"),
        "named statements through the pooler without the fix: {stderr}"
    );
    // Nothing was lost to the misconfiguration: every entry is pending or delivered.
    let stats = direct.exact_stats();
    let (pending, delivered) = (&stats["counts"]["pending"], &stats["counts"]["delivered"]);
    assert_eq!(
        pending.as_u64().unwrap() + delivered.as_u64().unwrap(),
        500,
        "{stats}"
    );
    // The portable store cannot go unnamed; it says so before touching anything.
    fails(
        pooled.cmd().args([
            "--store",
            "portable",
            "--statement-mode",
            "unnamed",
            "stats",
        ]),
        "transaction-mode pooler",
    );
}
