//! The real `outbox` binary against the test PostgreSQL server, each test in its own schema.

use outbox_testkit::postgres::PgTestDb;

mod common;

use common::{fails, ok, Db};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_enqueue_drain_and_stats_on_postgres() {
    let Some(pg) = PgTestDb::create().await else {
        return;
    };
    let db = Db::postgres(&pg.url, &pg.schema);
    fails(db.cmd().arg("stats"), "not migrated");
    assert!(ok(db.cmd().args(["migrate", "--print"])).contains("CREATE TABLE"));
    ok(db.cmd().arg("migrate"));
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
    // The live picture (the default) counts what is live exactly and says its delivered
    // count is PostgreSQL's estimate.
    let live = db.stats();
    assert_eq!(live["counts"]["pending"], 0, "{live}");
    assert_eq!(live["delivered_estimated"], true, "{live}");
    assert!(live["claims_made"].is_null(), "{live}");
    assert!(ok(db.cmd().arg("stats")).contains("(estimate)"));
    assert!(ok(db.cmd().args(["dead-letters", "list"])).contains("no dead letters"));
}

/// A libpq keyword/value string is taken for PostgreSQL, by its keys, with its host,
/// port, user and database.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_libpq_keyword_value_string_reaches_postgres() {
    let Some(pg) = PgTestDb::create().await else {
        return;
    };
    let rest = pg
        .url
        .trim_start_matches("postgresql://")
        .trim_start_matches("postgres://");
    let (user, rest) = rest.split_once('@').expect("a user in the test URL");
    let (address, dbname) = rest.split_once('/').expect("a database in the test URL");
    let dbname = dbname.split('?').next().unwrap_or(dbname);
    let (host, port) = address.rsplit_once(':').unwrap_or((address, "5432"));
    let keywords = format!("host={host} port={port} user={user} dbname={dbname}");
    let db = Db(vec![
        "--database-url".into(),
        keywords.clone(),
        "--schema".into(),
        pg.schema.clone(),
    ]);
    ok(db.cmd().arg("migrate"));
    ok(db.cmd().args(["enqueue", "--count", "7"]));
    assert_eq!(db.stats()["counts"]["pending"], 7, "{keywords}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_server_is_one_clear_line() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let db = Db(vec![
        "--database-url".into(),
        format!("postgres://postgres:secret@127.0.0.1:{port}/postgres"),
    ]);
    fails(db.cmd().arg("stats"), "Connection refused");
    let out = db.cmd().arg("stats").output().unwrap();
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("secret"),
        "the password leaked"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drain_processes_with_one_killed_deliver_everything_on_postgres() {
    let Some(pg) = PgTestDb::create().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = Db::postgres(&pg.url, &pg.schema);
    common::blocking(move || {
        common::drain_processes_with_one_killed_deliver_everything(&db, dir.path());
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ordered_drain_processes_with_one_killed_keep_each_key_in_order_on_postgres() {
    let Some(pg) = PgTestDb::create().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = Db::postgres(&pg.url, &pg.schema);
    common::blocking(move || {
        common::ordered_killed::ordered_drain_processes_with_one_killed_keep_each_key_in_order(
            &db,
            dir.path(),
        );
    })
    .await;
}

/// A missing database and an unknown role are reported in the server's words, with the
/// SQLSTATE, not as a bare "db error".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_servers_refusal_is_shown_with_its_sqlstate() {
    let Some(pg) = PgTestDb::create().await else {
        return;
    };
    let (base, _) = pg.url.rsplit_once('/').expect("a database in the URL");
    let missing = Db(vec![
        "--database-url".into(),
        format!("{base}/no_such_database_here"),
    ]);
    fails(missing.cmd().arg("stats"), "3D000");
    fails(
        missing.cmd().arg("stats"),
        "no_such_database_here\" does not exist",
    );
    let role = pg.url.replacen("postgres@", "no_such_role@", 1);
    assert_ne!(
        role, pg.url,
        "the test server's URL names the postgres role"
    );
    let unknown = Db(vec!["--database-url".into(), role]);
    fails(unknown.cmd().arg("stats"), "28000");
}

/// Against a server that accepts only TLS, as managed PostgreSQL servers do.
#[test]
fn tls_as_libpq_spells_it_and_a_refusal_that_says_why() {
    let server = match outbox_testkit::postgres_tls::tls_server() {
        Ok(s) => s,
        Err(e) => {
            outbox_testkit::engines::unavailable("postgres", &e);
            return;
        }
    };
    let verified = format!(
        "{}?sslmode=verify-full&sslrootcert={}",
        server.url,
        server.ca_file.display()
    );
    let db = Db(vec!["--database-url".into(), verified]);
    assert!(ok(db.cmd().arg("migrate")).contains("at version"));
    ok(db.cmd().args(["enqueue", "--count", "20"]));
    let out = ok(db
        .cmd()
        .args(["drain", "--until-empty", "--emitter", "noop"]));
    assert!(out.contains("delivered 20"), "{out}");
    let portable = Db(vec![
        "--database-url".into(),
        format!("{}?sslmode=require", server.url),
        "--store".into(),
        "portable".into(),
    ]);
    assert_eq!(portable.exact_stats()["counts"]["delivered"], 20);

    let plain = Db(vec![
        "--database-url".into(),
        format!("{}?sslmode=disable", server.url),
    ]);
    fails(plain.cmd().arg("stats"), "no encryption");
    fails(plain.cmd().arg("stats"), "SQLSTATE 28000");
    let wrong_ca = Db(vec![
        "--database-url".into(),
        format!(
            "{}?sslmode=verify-full&sslrootcert={}",
            server.url,
            server.other_ca_file.display()
        ),
    ]);
    fails(wrong_ca.cmd().arg("stats"), "UnknownIssuer");
}

/// Runs `outbox stats` with `args` until `done` holds of its (stdout, stderr), for up to
/// 20 s; returns that output. Other tests share the server, and their short transactions
/// may briefly hold an older snapshot than the one a test holds.
fn stats_until(db: &Db, args: &[&str], done: impl Fn(&str, &str) -> bool) -> (String, String) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let out = db.cmd().arg("stats").args(args).output().unwrap();
        assert!(out.status.success(), "{out:?}");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        if done(&stdout, &stderr) || std::time::Instant::now() > deadline {
            return (stdout, stderr);
        }
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
}

/// A transaction held open by another session keeps the drain's dead rows: `stats` shows
/// them and names the session holding the oldest snapshot, warns on standard error once
/// either passes its threshold, and stops naming the session once it ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stats_name_a_snapshot_held_open_elsewhere_and_warn_past_the_threshold() {
    let Some(pg) = PgTestDb::create().await else {
        return;
    };
    let db = Db::postgres(&pg.url, &pg.schema);
    ok(db.cmd().arg("migrate"));
    let json = db.stats();
    assert_eq!(json["cleanup"]["dead_rows"], 0, "{json}");

    let holder = pg.connect().await;
    holder
        .batch_execute(
            "SET application_name = 'held-report'; \
             BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM pg_class",
        )
        .await
        .unwrap();
    ok(db.cmd().args(["enqueue", "--count", "60"]));
    ok(db
        .cmd()
        .args(["drain", "--until-empty", "--emitter", "noop"]));

    let (quiet_out, quiet_err) = stats_until(&db, &[], |out, _| out.contains("held-report"));
    assert!(quiet_out.contains("held-report"), "{quiet_out}");
    assert!(quiet_out.contains("idle in transaction"), "{quiet_out}");
    assert!(!quiet_err.contains("warning"), "{quiet_err}");

    let args = [
        "--warn-snapshot-age",
        "1s",
        "--warn-dead-rows",
        "60",
        "--warn-dead-index-entries",
        "60",
    ];
    let (out, err) = stats_until(&db, &args, |_, err| {
        err.contains("held-report") && err.contains("dead row versions")
    });
    assert!(
        err.contains("outbox: warning: a snapshot has been held for")
            && err.contains("held-report"),
        "{out}\n{err}"
    );
    assert!(
        err.contains("dead row versions (at least 60 warns)"),
        "{out}\n{err}"
    );
    assert!(
        err.contains("entries of rows no longer pending (at least 60 warns)"),
        "{out}\n{err}"
    );
    let json = db.stats();
    let dead = json["cleanup"]["dead_rows"].as_u64().unwrap();
    assert!(
        dead >= 60,
        "a claim and a completion per entry, none removable: {json}"
    );
    // Every delivered entry's pending-index entry stays, and so does the old one of each
    // claim that found no room on its row's page.
    let entries = json["cleanup"]["dead_index_entries"].as_u64().unwrap();
    assert!(entries >= 60, "{json}");
    assert!(
        json["cleanup"]["oldest_snapshot"]["open_for_seconds"]
            .as_f64()
            .unwrap()
            >= 1.0,
        "{json}"
    );

    holder.batch_execute("COMMIT").await.unwrap();
    let out = ok(db.cmd().arg("stats"));
    assert!(!out.contains("held-report"), "{out}");
}

/// A server that accepts connections and then never answers (a black-holed path): every
/// command gives up within `--call-timeout`, on either store, with a message naming the
/// server, and works again once the path heals.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_give_up_within_the_call_timeout_when_the_server_stops_answering() {
    use std::time::{Duration, Instant};

    use outbox_testkit::postgres::server_addr;
    use outbox_testkit::tcp_proxy::TcpProxy;

    let Some(pg) = PgTestDb::create().await else {
        return;
    };
    let server = server_addr(&pg.url);
    let proxy = TcpProxy::start(server).await.unwrap();
    let via = pg.url.replacen(
        &format!(":{}/", server.port()),
        &format!(":{}/", proxy.local_addr().port()),
        1,
    );
    assert_ne!(via, pg.url, "the URL names the server's port");
    let direct = Db::postgres(&pg.url, &pg.schema);
    let through = Db::postgres(&via, &pg.schema);
    let run = |db: Db, args: Vec<&'static str>, healthy: bool| {
        tokio::task::spawn_blocking(move || {
            let started = Instant::now();
            let mut cmd = db.cmd();
            cmd.args(["--call-timeout", "1s"]).args(args);
            if healthy {
                ok(&mut cmd);
            } else {
                fails(&mut cmd, "PostgreSQL server");
            }
            started.elapsed()
        })
    };
    run(direct.clone(), vec!["migrate"], true).await.unwrap();
    run(direct, vec!["enqueue", "--count", "5"], true)
        .await
        .unwrap();
    run(through.clone(), vec!["stats"], true).await.unwrap();

    proxy.black_hole();
    for store in ["optimized", "portable"] {
        let took = run(through.clone(), vec!["--store", store, "stats"], false)
            .await
            .unwrap();
        assert!(
            took < Duration::from_secs(8),
            "{store}: gave up after {took:?}, the call timeout being 1s"
        );
    }

    proxy.restore();
    run(through, vec!["stats"], true).await.unwrap();
}

/// The pool is sized to the drain: eight workers get what they need by default, and a
/// cap below that is said at start, the drain still delivering through it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pool_is_sized_to_the_workers_and_a_smaller_cap_is_said_at_start() {
    let Some(pg) = PgTestDb::create().await else {
        return;
    };
    let db = Db::postgres(&pg.url, &pg.schema);
    ok(db.cmd().arg("migrate"));
    ok(db.cmd().args(["enqueue", "--count", "2000"]));
    let drain = |extra: &[&str]| {
        db.cmd()
            .args(extra)
            .args([
                "drain",
                "--until-empty",
                "--workers",
                "8",
                "--emitter",
                "noop",
            ])
            .output()
            .unwrap()
    };
    let sized = drain(&[]);
    let stderr = String::from_utf8_lossy(&sized.stderr);
    assert!(sized.status.success(), "{stderr}");
    assert!(!stderr.contains("cannot serve"), "{stderr}");
    ok(db.cmd().args(["enqueue", "--count", "1000"]));
    let capped = drain(&["--pool-size", "3"]);
    let stderr = String::from_utf8_lossy(&capped.stderr);
    assert!(capped.status.success(), "{stderr}");
    assert!(
        stderr.contains("--pool-size 3 cannot serve 8 workers"),
        "a pool too small for the workers was not said: {stderr}"
    );
    assert_eq!(db.exact_stats()["counts"]["delivered"], 3000);
}
