//! `outbox ui` on a seeded SQLite file and PostgreSQL schema: over plain HTTP (health,
//! metrics, bad input, the token), and in a real browser (Debian's chromium driven by
//! Playwright from `tests/browser/ui.mjs` for the pages and `writes.mjs` for requeue and
//! purge, allowed and refused; screenshots kept under `target/ui-screenshots/ENGINE/`).

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

/// `outbox ui` on `db` at `port` with `extra` arguments, once it answers /healthz; what
/// it prints goes to a file of its own.
struct Served(Child, tempfile::NamedTempFile);

impl Served {
    fn start(db: &Db, port: u16, extra: &[&str]) -> Self {
        let printed = tempfile::NamedTempFile::new().expect("a file for what the server prints");
        let child = db
            .cmd()
            .args(["ui", "--listen", &format!("127.0.0.1:{port}")])
            .args(extra)
            .stdout(printed.reopen().expect("the file again"))
            .spawn()
            .expect("start outbox ui");
        let served = Self(child, printed);
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

impl Served {
    /// What the server printed so far.
    fn printed(&self) -> String {
        std::fs::read_to_string(self.1.path()).expect("read what the server printed")
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

/// A browser scenario: given the browser, a migrated database and its engine's name.
type Scenario = fn(&(PathBuf, PathBuf), &Db, &str);

/// Runs `scenario` on a migrated SQLite file, if a browser is here.
fn on_sqlite(scenario: Scenario) {
    let Some(browser) = browser() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = Db::sqlite(&migrated(dir.path()));
    scenario(&browser, &db, "sqlite");
}

/// Runs `scenario` on a migrated PostgreSQL schema, if a browser and a server are here.
async fn on_postgres(scenario: Scenario) {
    let Some(browser) = browser() else {
        return;
    };
    let Some(pg) = PgTestDb::create().await else {
        return;
    };
    let db = Db::postgres(&pg.url, &pg.schema);
    ok(db.cmd().arg("migrate"));
    tokio::task::spawn_blocking(move || scenario(&browser, &db, "postgres"))
        .await
        .expect("the browser run");
}

#[test]
fn the_pages_work_in_a_real_browser_on_sqlite() {
    on_sqlite(pages_in_a_browser);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pages_work_in_a_real_browser_on_postgres() {
    on_postgres(pages_in_a_browser).await;
}

#[test]
fn writes_in_a_real_browser_on_sqlite() {
    on_sqlite(writes_in_a_browser);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_in_a_real_browser_on_postgres() {
    on_postgres(writes_in_a_browser).await;
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

    let shots = in_browser(
        (chromium.as_path(), scripts.as_path()),
        engine,
        &["ui.mjs", &format!("http://127.0.0.1:{port}")],
    );
    for shot in ["overview.png", "entries.png", "entry.png"] {
        let size = std::fs::metadata(shots.join(shot)).map_or(0, |m| m.len());
        assert!(size > 10_000, "{engine}: {shot} is {size} bytes");
    }
}

/// Runs the browser script `script` (the first of `args`, the rest its arguments, then
/// the screenshot folder of `engine`), which must succeed; returns the folder.
fn in_browser((chromium, scripts): (&Path, &Path), engine: &str, args: &[&str]) -> PathBuf {
    let shots = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/ui-screenshots")
        .join(engine);
    std::fs::create_dir_all(&shots).unwrap();
    let (script, rest) = args.split_first().expect("a script");
    let out = Command::new("node")
        .arg(scripts.join(script))
        .args(&rest[..1])
        .arg(&shots)
        .args(&rest[1..])
        .env("OUTBOX_TEST_CHROMIUM", chromium)
        .stdin(Stdio::null())
        .output()
        .expect("run node");
    assert!(
        out.status.success(),
        "the browser found {script} on {engine} wrong:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    shots
}

/// Three dead letters (a webhook that answers 400), then: read-only pages offer no write
/// and refuse a post, nothing changed; with `--allow-writes` one is requeued from its row
/// and the other two purged at once, and the server printed both writes.
fn writes_in_a_browser((chromium, scripts): &(PathBuf, PathBuf), db: &Db, engine: &str) {
    let browser = (chromium.as_path(), scripts.as_path());
    ok(db.cmd().args([
        "enqueue",
        "--count",
        "3",
        "--topic",
        "hooks",
        "--partition-key",
        "k1",
    ]));
    ok(db.cmd().args([
        "enqueue",
        "--count",
        "2",
        "--topic",
        "other",
        "--partition-key",
        "k2",
    ]));
    let (hook, _) = common::webhook_server(400, None, "content-type");
    ok(db
        .cmd()
        .args(["drain", "--until-empty", "--emitter"])
        .arg(format!("webhook:{hook}")));
    assert_eq!(db.stats()["counts"]["dead_lettered"], 5);

    let port = free_port();
    let read_only = Served::start(db, port, &[]);
    let base = format!("http://127.0.0.1:{port}");
    in_browser(browser, engine, &["writes.mjs", &base, "read-only"]);
    assert_eq!(
        db.stats()["counts"]["dead_lettered"],
        5,
        "read-only pages changed the outbox"
    );
    assert!(
        read_only.printed().contains("refused a write"),
        "the refusals were not printed: {}",
        read_only.printed()
    );
    drop(read_only);

    let port = free_port();
    let writable = Served::start(db, port, &["--allow-writes"]);
    let base = format!("http://127.0.0.1:{port}");
    in_browser(browser, engine, &["writes.mjs", &base, "allowed"]);
    let stats = db.stats();
    assert_eq!(
        (
            &stats["counts"]["pending"],
            &stats["counts"]["dead_lettered"]
        ),
        (&serde_json::json!(1), &serde_json::json!(2)),
        "only topic hooks' dead letters were purged: {stats}"
    );
    let printed = writable.printed();
    assert!(printed.contains("requeue and purge allowed"), "{printed}");
    assert!(
        printed.contains("an unauthenticated client at 127.0.0.1:")
            && printed.contains(" requeued entry ")
            && printed.contains(" purged every dead_lettered of topic hooks (2 entries)"),
        "the writes were not printed as they were done: {printed}"
    );
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
        ("/lookup?q=%20", 400),
        ("/lookup?id=nope", 303),
        ("/keys?key=nope", 200),
        ("/keys?key=%20", 400),
        // An id that is no entry's may be a partition key.
        ("/lookup?q=0193a1b2-0000-7000-8000-000000000000", 303),
        ("/entries?status=failed&key=%20", 400),
        ("/entries/0193a1b2-0000-7000-8000-000000000000", 404),
        ("/", 200),
    ] {
        let (status, body) = get(port, path, "").unwrap();
        assert_eq!(status, want, "{path}: {body}");
    }
    // A page of another site whose name was made to resolve to this machine.
    let rebound = raw(port, "rebound.example:80", "/entries");
    assert!(rebound.starts_with("HTTP/1.1 421"), "{rebound}");
    let page = raw(port, &format!("localhost:{port}"), "/").to_ascii_lowercase();
    assert!(page.starts_with("http/1.1 200"), "{page}");
    assert!(
        page.contains("x-frame-options: deny")
            && page.contains("content-security-policy: frame-ancestors 'none'"),
        "pages may be framed: {page}"
    );
}

/// The whole reply to `GET path` sent to `port` with `host` as its Host.
fn raw(port: u16, host: &str, path: &str) -> String {
    use std::io::{Read as _, Write as _};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    reply
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

/// A drain whose webhook receiver cannot be reached holds its entries (exit code 4 past
/// `--route-down-limit`, nothing dead-lettered), and the overview says which route they
/// wait for.
#[test]
fn the_overview_names_the_route_held_entries_wait_for() {
    let dir = tempfile::tempdir().unwrap();
    let db = migrated(dir.path());
    ok(outbox(&db).args(["enqueue", "--count", "5"]));
    let nobody = free_port();
    let emitter = format!("webhook:http://127.0.0.1:{nobody}/hook");
    let held = common::held_for_a_route(&Db::sqlite(&db), &emitter);
    assert_eq!(held["kind"], "unreachable", "{held}");
    let port = free_port();
    let _ui = Served::start(&Db::sqlite(&db), port, &[]);
    let (status, page) = get(port, "/", "").unwrap();
    assert_eq!(status, 200);
    assert!(
        page.contains("held for a failing route, unreachable (webhook http://127.0.0.1:"),
        "{page}"
    );
}
