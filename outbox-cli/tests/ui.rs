//! `outbox ui` on a seeded SQLite file and PostgreSQL schema: over plain HTTP (health,
//! metrics, bad input, the token), and in a real browser (Debian's chromium driven by
//! Playwright from `tests/browser/ui.mjs`; screenshots kept under
//! `target/ui-screenshots/ENGINE/`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::scrape::{free_port, get};
use common::{fails, ok, Db};
use outbox_testkit::postgres::PgTestDb;

fn outbox(db: &Path) -> Command {
    Db::sqlite(db).cmd()
}

/// `outbox ui` on `db` at `port` with `extra` arguments, once it answers /healthz.
struct Served(Child);

impl Served {
    fn start(db: &Db, port: u16, extra: &[&str]) -> Self {
        let child = db
            .cmd()
            .args(["ui", "--listen", &format!("127.0.0.1:{port}")])
            .args(extra)
            .stdout(Stdio::null())
            .spawn()
            .expect("start outbox ui");
        let served = Self(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        while get(port, "/healthz", "").map(|(status, _)| status) != Some(200) {
            assert!(
                Instant::now() < deadline,
                "outbox ui never answered /healthz"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        served
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A migrated SQLite file in `dir`.
fn migrated(dir: &Path) -> PathBuf {
    let db = dir.join("outbox.db");
    ok(outbox(&db).arg("migrate"));
    db
}

/// What the browser test needs, or `None` after a loud report (a failure where the
/// browser is required).
fn browser() -> Option<(PathBuf, PathBuf)> {
    let chromium = PathBuf::from(
        std::env::var("OUTBOX_TEST_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into()),
    );
    let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser");
    let missing = if !chromium.exists() {
        Some(format!("no chromium at {}", chromium.display()))
    } else if !scripts.join("node_modules/playwright-core").exists() {
        Some(format!(
            "playwright-core is not installed in {} (npm ci there)",
            scripts.display()
        ))
    } else if Command::new("node").arg("--version").output().is_err() {
        Some("node is not installed".into())
    } else {
        None
    };
    if let Some(why) = missing {
        outbox_testkit::engines::unavailable("browser", &why);
        return None;
    }
    Some((chromium, scripts))
}

#[test]
fn the_pages_work_in_a_real_browser_on_sqlite() {
    let Some(browser) = browser() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = Db::sqlite(&migrated(dir.path()));
    pages_in_a_browser(&browser, &db, "sqlite");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pages_work_in_a_real_browser_on_postgres() {
    let Some(browser) = browser() else {
        return;
    };
    let Some(pg) = PgTestDb::create().await else {
        return;
    };
    let db = Db::postgres(&pg.url, &pg.schema);
    ok(db.cmd().arg("migrate"));
    tokio::task::spawn_blocking(move || pages_in_a_browser(&browser, &db, "postgres"))
        .await
        .expect("the browser run");
}

/// Seeds `db` while `outbox ui` samples it (100 entries delivered, then 120 pending and
/// one whose payload is markup), and has chromium check the pages (`tests/browser/ui.mjs`).
fn pages_in_a_browser((chromium, scripts): &(PathBuf, PathBuf), db: &Db, engine: &str) {
    let port = free_port();
    let _ui = Served::start(db, port, &["--sample-interval", "200ms"]);
    // Something delivered while the server samples, for the chart.
    ok(db
        .cmd()
        .args(["enqueue", "--count", "100", "--topic", "orders"]));
    std::thread::sleep(Duration::from_millis(500));
    ok(db
        .cmd()
        .args(["drain", "--until-empty", "--emitter", "noop"]));
    ok(db
        .cmd()
        .args(["enqueue", "--count", "120", "--topic", "orders"]));
    ok(db.cmd().args([
        "enqueue",
        "--topic",
        "markup",
        "--payload",
        "<script>window.ran = true; alert(\"ran\")</script>",
        "--header",
        "x-note=<b>bold?</b>",
    ]));
    std::thread::sleep(Duration::from_millis(800));

    let shots = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/ui-screenshots")
        .join(engine);
    std::fs::create_dir_all(&shots).unwrap();
    let out = Command::new("node")
        .arg(scripts.join("ui.mjs"))
        .arg(format!("http://127.0.0.1:{port}"))
        .arg(&shots)
        .env("OUTBOX_TEST_CHROMIUM", chromium)
        .stdin(Stdio::null())
        .output()
        .expect("run node");
    assert!(
        out.status.success(),
        "the browser found the pages on {engine} wrong:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    for shot in ["overview.png", "entries.png", "entry.png"] {
        let size = std::fs::metadata(shots.join(shot)).map_or(0, |m| m.len());
        assert!(size > 10_000, "{engine}: {shot} is {size} bytes");
    }
}

#[test]
fn health_metrics_and_bad_input_over_plain_http() {
    let dir = tempfile::tempdir().unwrap();
    let db = migrated(dir.path());
    ok(outbox(&db).args(["enqueue", "--count", "3"]));
    let port = free_port();
    let _ui = Served::start(&Db::sqlite(&db), port, &["--sample-interval", "100ms"]);
    std::thread::sleep(Duration::from_millis(300));
    let (status, metrics) = get(port, "/metrics", "").unwrap();
    assert_eq!(status, 200);
    assert!(
        metrics.contains("outbox_entries{status=\"pending\"} 3"),
        "{metrics}"
    );
    for (path, want) in [
        ("/entries?status=nonsense", 400),
        ("/entries?status=pending&after=nope", 400),
        ("/entries?status=pending&limit=0", 400),
        ("/entries/not-an-id", 400),
        ("/entries/0193a1b2-0000-7000-8000-000000000000", 404),
        ("/", 200),
    ] {
        let (status, body) = get(port, path, "").unwrap();
        assert_eq!(status, want, "{path}: {body}");
    }
}

#[test]
fn a_token_guards_every_page_but_health_and_a_reachable_listener_needs_one() {
    let dir = tempfile::tempdir().unwrap();
    let db = migrated(dir.path());
    fails(
        outbox(&db).args(["ui", "--listen", "0.0.0.0:0"]),
        "--auth-token-file",
    );
    let short = dir.path().join("short");
    std::fs::write(&short, "abc\n").unwrap();
    fails(
        outbox(&db).args(["ui", "--auth-token-file", short.to_str().unwrap()]),
        "at least 16 characters",
    );
    let file = dir.path().join("token");
    std::fs::write(&file, "s3cret-token-for-tests\n").unwrap();
    let port = free_port();
    let _ui = Served::start(
        &Db::sqlite(&db),
        port,
        &["--auth-token-file", file.to_str().unwrap()],
    );
    assert_eq!(get(port, "/", "").unwrap().0, 401);
    assert_eq!(get(port, "/metrics", "").unwrap().0, 401);
    let bearer = "Authorization: Bearer s3cret-token-for-tests\r\n";
    assert_eq!(get(port, "/", bearer).unwrap().0, 200);
    assert_eq!(get(port, "/metrics", bearer).unwrap().0, 200);
    let wrong = "Authorization: Bearer s3cret-token-for-test\r\n";
    assert_eq!(get(port, "/", wrong).unwrap().0, 401);
}
