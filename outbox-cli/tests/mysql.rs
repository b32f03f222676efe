//! The real `outbox` binary against the MariaDB / MySQL test server, each test in a
//! database of its own.

use outbox_testkit::mysql::TestDatabase;

mod common;

use common::{fails, ok, Db};

fn db(server: &TestDatabase, scheme: &str) -> Db {
    let url = server.url.replacen("mysql://", &format!("{scheme}://"), 1);
    Db(vec!["--database-url".into(), url])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_enqueue_drain_and_operate_on_mariadb() {
    let Some(server) = TestDatabase::create().await else {
        return;
    };
    let db = db(&server, "mariadb");
    fails(db.cmd().arg("stats"), "not migrated");
    assert!(ok(db.cmd().args(["migrate", "--print"])).contains("CREATE TABLE `outbox`"));
    ok(db.cmd().arg("migrate"));
    ok(db.cmd().args(["migrate", "--ordered"]));
    ok(db.cmd().args(["enqueue", "--count", "1500"]));
    assert_eq!(db.stats()["counts"]["pending"], 1500);
    let out = ok(db.cmd().args([
        "drain",
        "--until-empty",
        "--workers",
        "3",
        "--emitter",
        "noop",
    ]));
    assert!(out.contains("delivered 1500"), "{out}");
    ok(db
        .cmd()
        .args(["--store", "portable", "enqueue", "--count", "200"]));
    let out = ok(db.cmd().args([
        "--store",
        "portable",
        "drain",
        "--until-empty",
        "--workers",
        "2",
        "--emitter",
        "noop",
    ]));
    assert!(out.contains("delivered 200"), "{out}");
    let stats = db.exact_stats();
    assert_eq!(stats["counts"]["delivered"], 1700);
    assert_eq!(stats["counts"]["pending"], 0);
    assert!(
        ok(db
            .cmd()
            .args(["list", "--status", "delivered", "--limit", "3"]))
        .lines()
        .count()
            >= 3
    );
    assert!(ok(db.cmd().args(["dead-letters", "list"])).contains("no dead letters"));
    std::thread::sleep(std::time::Duration::from_millis(20));
    ok(db.cmd().args(["prune", "--delivered-older-than", "1ms"]));
    assert_eq!(db.exact_stats()["counts"]["delivered"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_in_another_database_is_named_with_schema() {
    let Some(server) = TestDatabase::create().await else {
        return;
    };
    let Some(other) = TestDatabase::create().await else {
        return;
    };
    let db = Db(vec![
        "--database-url".into(),
        server.url.clone(),
        "--schema".into(),
        other.name.clone(),
        "--table".into(),
        "events".into(),
    ]);
    ok(db.cmd().arg("migrate"));
    ok(db.cmd().args(["enqueue", "--count", "5"]));
    assert_eq!(db.stats()["counts"]["pending"], 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_server_is_one_clear_line_without_the_password() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let db = Db(vec![
        "--database-url".into(),
        format!("mysql://app:secret@127.0.0.1:{port}/app"),
    ]);
    fails(db.cmd().arg("stats"), "cannot connect to MariaDB / MySQL");
    let out = db.cmd().arg("stats").output().unwrap();
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("secret"),
        "the password leaked"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drain_processes_with_one_killed_deliver_everything_on_mariadb() {
    let Some(server) = TestDatabase::create().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = db(&server, "mysql");
    common::blocking(move || {
        common::drain_processes_with_one_killed_deliver_everything(&db, dir.path());
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ordered_drain_processes_with_one_killed_keep_each_key_in_order_on_mariadb() {
    let Some(server) = TestDatabase::create().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = db(&server, "mysql");
    common::blocking(move || {
        common::ordered_killed::ordered_drain_processes_with_one_killed_keep_each_key_in_order(
            &db,
            dir.path(),
        );
    })
    .await;
}
