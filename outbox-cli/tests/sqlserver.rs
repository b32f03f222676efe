//! The real `outbox` binary with SQL Server URLs: what needs no server runs everywhere;
//! the whole operator flow runs where `OUTBOX_TEST_SQLSERVER_URL` names a server.

use std::net::TcpListener;

use outbox_core::TableName;

mod common;

use common::{fails_with, ok, Db};

fn db(url: &str) -> Db {
    Db(vec!["--database-url".into(), url.into()])
}

#[test]
fn migrate_print_speaks_t_sql_for_urls_and_ado_strings() {
    for url in [
        "sqlserver://sa:secret@db.example:1433/app",
        "mssql://sa:secret@db.example/app",
        "Server=tcp:db.example,1433;Database=app;User Id=sa;Password=secret",
        "jdbc:sqlserver://db.example:1433;databaseName=app;user=sa;password=secret",
    ] {
        let script = ok(db(url)
            .cmd()
            .args(["--schema", "app", "migrate", "--print"]));
        assert!(
            script.contains("CREATE TABLE [app].[outbox]"),
            "{url}: {script}"
        );
        assert!(
            script.contains("READPAST") || script.contains("WHERE status = 0"),
            "{url}"
        );
        assert!(
            !script.contains("secret"),
            "{url}: the password reached the output"
        );
    }
}

#[test]
fn an_unreachable_server_is_named_without_its_password() {
    // A port nothing listens on: bound, then released.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("sqlserver://sa:s3cret-pw@127.0.0.1:{port}/app");
    let stderr = fails_with(
        db(&url).cmd().arg("stats"),
        1,
        "cannot reach SQL Server at 127.0.0.1",
    );
    assert!(!stderr.contains("s3cret-pw"), "{stderr}");
}

/// Accepting any certificate is said once, in the command's words, however many
/// connections the command tries.
#[test]
fn trusting_any_certificate_is_said_once() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    for url in [
        format!("sqlserver://sa:x@127.0.0.1:{port}/app?trustServerCertificate=true"),
        format!("Server=tcp:127.0.0.1,{port};Database=app;User Id=sa;Password=x;TrustServerCertificate=true"),
    ] {
        let stderr = fails_with(db(&url).cmd().arg("stats"), 1, "cannot reach SQL Server");
        assert_eq!(
            stderr.matches("certificate is not checked").count(),
            1,
            "{url}: {stderr}"
        );
    }
}

#[test]
fn a_malformed_sqlserver_url_is_a_usage_error() {
    fails_with(
        db("sqlserver://sa:x@host/app?sslmode=require")
            .cmd()
            .arg("stats"),
        2,
        "unknown option \"sslmode\"",
    );
    fails_with(
        db("sqlserver://sa:x@host:notaport/app").cmd().arg("stats"),
        2,
        "port",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_enqueue_drain_and_stats_on_sqlserver() {
    let Ok(url) = std::env::var("OUTBOX_TEST_SQLSERVER_URL") else {
        outbox_testkit::engines::unavailable(
            "sqlserver",
            "OUTBOX_TEST_SQLSERVER_URL is not set; to run this test: docker compose up -d sqlserver, then set it as the README's Test servers section says",
        );
        return;
    };
    let table_name = format!("outbox_cli_{}", std::process::id());
    let table = TableName::new(&table_name).unwrap();
    let d = Db(vec![
        "--database-url".into(),
        url.clone(),
        "--table".into(),
        table_name.clone(),
    ]);
    ok(d.cmd().arg("migrate"));
    ok(d.cmd().args(["enqueue", "--count", "1500"]));
    assert_eq!(d.stats()["counts"]["pending"], 1500);
    let out = ok(d.cmd().args([
        "drain",
        "--until-empty",
        "--workers",
        "3",
        "--emitter",
        "noop",
    ]));
    assert!(out.contains("delivered 1500"), "{out}");
    ok(d.cmd()
        .args(["--store", "portable", "enqueue", "--count", "200"]));
    let out = ok(d.cmd().args([
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
    assert_eq!(d.exact_stats()["counts"]["delivered"], 1700);

    let options = outbox_sqlserver::ConnectOptions::parse(&url).unwrap();
    let mut client = outbox_sqlserver::connect(&options).await.unwrap();
    outbox_sqlserver::migrate_down(&mut client, &table)
        .await
        .unwrap();
}
