//! Running the real `outbox` binary against a database, for the SQLite and PostgreSQL tests.
#![allow(dead_code, unreachable_pub)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;

pub mod ordered_killed;
pub mod scrape;

/// The database a command runs against, as the global options that name it.
#[derive(Debug, Clone)]
pub struct Db(pub Vec<String>);

impl Db {
    /// A SQLite file.
    pub fn sqlite(path: &Path) -> Self {
        Self(vec![
            "--database-url".into(),
            format!("sqlite://{}", path.display()),
        ])
    }

    /// A schema on a PostgreSQL server.
    pub fn postgres(url: &str, schema: &str) -> Self {
        Self(vec![
            "--database-url".into(),
            url.into(),
            "--schema".into(),
            schema.into(),
        ])
    }

    /// `outbox` with these options and no inherited database URL.
    pub fn cmd(&self) -> Command {
        let mut cmd = Command::cargo_bin("outbox").expect("binary built");
        cmd.args(&self.0)
            .env_remove("OUTBOX_DATABASE_URL")
            .stdin(Stdio::null());
        cmd
    }

    /// The stats as JSON.
    /// `outbox stats --json`: the live picture (delivered possibly estimated).
    pub fn stats(&self) -> serde_json::Value {
        serde_json::from_str(&ok(self.cmd().args(["stats", "--json"]))).expect("stats json")
    }

    /// `outbox stats --exact --json`: every row counted.
    pub fn exact_stats(&self) -> serde_json::Value {
        serde_json::from_str(&ok(self.cmd().args(["stats", "--exact", "--json"])))
            .expect("stats json")
    }
}

/// Runs a command that must succeed; returns its standard output.
pub fn ok(cmd: &mut Command) -> String {
    let out = cmd.output().expect("runs");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// Runs a command that must fail with one clear line on stderr and no panic.
pub fn fails(cmd: &mut Command, expected: &str) {
    let out = cmd.output().expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{cmd:?} succeeded");
    assert!(stderr.contains(expected), "{cmd:?}: {stderr}");
    assert!(
        !stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"),
        "{stderr}"
    );
}

/// Runs a command that must fail with exit `code` and one clear line on stderr naming
/// `expected`; returns that stderr.
pub fn fails_with(cmd: &mut Command, code: i32, expected: &str) -> String {
    let out = cmd.output().expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "{cmd:?}: {stderr}");
    assert!(stderr.contains(expected), "{cmd:?}: {stderr}");
    assert!(
        !stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"),
        "{stderr}"
    );
    stderr
}

/// For each entry id, the owners of its emissions in file order.
pub fn emissions(path: &Path) -> HashMap<String, Vec<String>> {
    let mut seen: HashMap<String, Vec<String>> = HashMap::new();
    for e in emitted(path) {
        seen.entry(e.id).or_default().push(e.owner);
    }
    seen
}

/// One line of the jsonl emitter's file: which entry, of which key, by which worker.
pub struct Emitted {
    pub id: String,
    pub key: Option<String>,
    pub owner: String,
}

/// The jsonl emitter's lines at `path`, in the order the processes wrote them (none
/// while the file does not exist).
pub fn emitted(path: &Path) -> Vec<Emitted> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).expect("json line");
            Emitted {
                id: v["id"].as_str().expect("id").to_owned(),
                key: v["partition_key"].as_str().map(str::to_owned),
                owner: v["owner"].as_str().expect("owner").to_owned(),
            }
        })
        .collect()
}

/// A drain process until the outbox is empty: two workers, 2 s leases, emitting into
/// `jsonl` as `owner`, with `extra` arguments.
pub fn spawn_drain(db: &Db, jsonl: &Path, owner: &str, extra: &[&str]) -> std::process::Child {
    let emitter = format!("jsonl:{}", jsonl.display());
    db.cmd()
        .args([
            "drain",
            "--until-empty",
            "--workers",
            "2",
            "--lease",
            "2s",
            "--owner",
            owner,
            "--emitter",
            &emitter,
        ])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Starts a drain that emits slowly (so it is surely mid-batch when killed) and waits
/// for its first emission; `extra` as [`spawn_drain`]'s.
pub fn slow_victim(db: &Db, jsonl: &Path, extra: &[&str]) -> std::process::Child {
    let slow = [&["--emit-delay", "20ms", "--concurrency", "1"], extra].concat();
    let victim = spawn_drain(db, jsonl, "victim", &slow);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !emissions(jsonl)
        .values()
        .flatten()
        .any(|o| o.starts_with("victim"))
    {
        assert!(Instant::now() < deadline, "the victim never emitted");
        std::thread::sleep(Duration::from_millis(10));
    }
    victim
}

/// Four drain processes until the outbox is empty, `extra` arguments to each: a slow one
/// ([`slow_victim`]), killed once it has emitted and three more have started, and the
/// three, which must end well.
pub fn four_drains_one_killed(db: &Db, jsonl: &Path, extra: &[&str]) {
    let mut victim = slow_victim(db, jsonl, extra);
    let survivors: Vec<_> = ["a", "b", "c"]
        .iter()
        .map(|o| spawn_drain(db, jsonl, o, extra))
        .collect();
    victim.kill().unwrap();
    victim.wait().unwrap();
    for mut s in survivors {
        assert!(s.wait().unwrap().success(), "a surviving drain failed");
    }
}

/// Runs `f` (which blocks, running the binary) on a blocking thread of the test's runtime.
pub async fn blocking(f: impl FnOnce() + Send + 'static) {
    tokio::task::spawn_blocking(f).await.unwrap();
}

/// Several drain processes on one database; one is killed mid-batch. Every entry is
/// delivered, and an entry is emitted twice only when its first emission came from the
/// killed process (whose leases had to expire before anyone else could take them).
pub fn drain_processes_with_one_killed_deliver_everything(db: &Db, dir: &Path) {
    ok(db.cmd().arg("migrate"));
    ok(db.cmd().args(["enqueue", "--count", "3000"]));
    let jsonl = dir.join("out.jsonl");
    four_drains_one_killed(db, &jsonl, &[]);
    let after = db.exact_stats();
    assert_eq!(after["counts"]["delivered"], 3000, "{after}");
    let seen = emissions(&jsonl);
    assert_eq!(seen.len(), 3000, "an entry was never emitted");
    let mut duplicates = 0;
    for (id, owners) in &seen {
        if owners.len() > 1 {
            duplicates += 1;
            assert!(
                owners[0].starts_with("victim"),
                "{id} was emitted twice without the victim: {owners:?}"
            );
            assert!(
                owners[1..].iter().all(|o| !o.starts_with("victim")),
                "{id}: {owners:?}"
            );
        }
    }
    // The victim was killed holding claims it had emitted but not completed.
    assert!(
        duplicates > 0,
        "the kill caught no emission in flight; the test proved nothing"
    );
    println!("{duplicates} entries emitted twice, all first emitted by the killed process");
}

/// A tiny HTTP server answering every request with `status` (and `Retry-After` when
/// given). It records the value of every header named `record` (lower case) it saw.
pub fn webhook_server(
    status: u16,
    retry_after: Option<u32>,
    record: &'static str,
) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let values = Arc::new(Mutex::new(Vec::new()));
    let seen = values.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                let lower = line.to_ascii_lowercase();
                if let Some(v) = lower.strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                if let Some(v) = lower.strip_prefix(&format!("{record}:")) {
                    seen.lock().unwrap().push(v.trim().to_owned());
                }
            }
            let mut body = vec![0u8; length];
            let _ = reader.read_exact(&mut body);
            let extra = retry_after
                .map(|s| format!("Retry-After: {s}\r\n"))
                .unwrap_or_default();
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\n{extra}Content-Length: 0\r\nConnection: close\r\n\r\n"
            );
        }
    });
    (url, values)
}

/// Runs `outbox drain --until-empty --route-down-limit 1s` into `emitter` on `db`, whose
/// route must fail: asserts it exits 4 with nothing dead-lettered, and returns the first
/// route `outbox stats --json` says entries are held for.
pub fn held_for_a_route(db: &Db, emitter: &str) -> serde_json::Value {
    let out = db
        .cmd()
        .args([
            "drain",
            "--until-empty",
            "--route-down-limit",
            "1s",
            "--emitter",
            emitter,
        ])
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(err.contains("--route-down-limit"), "{err}");
    let stats = db.stats();
    assert_eq!(stats["counts"]["dead_lettered"], 0, "{stats}");
    stats["route_holds"][0].clone()
}
