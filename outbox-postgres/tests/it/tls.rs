//! TLS as managed PostgreSQL servers require it: against a throwaway cluster that refuses
//! plain connections and serves a certificate for `localhost` from a CA of its own.

use std::time::Duration;

use chrono::TimeDelta;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use outbox_core::{
    ClaimRequest, ClaimStore, Completion, CompletionRequest, EmissionResult, NewEntry, OutboxStore,
    TableName,
};
use outbox_postgres::{connect_config, PgClaimStore, PgStoreConfig, PgTls};
use outbox_testkit::postgres_tls::{tls_server, TlsPgServer};

use crate::support;

fn server() -> Option<&'static TlsPgServer> {
    match tls_server() {
        Ok(s) => Some(s),
        Err(e) => {
            outbox_testkit::engines::unavailable("postgres", &e);
            None
        }
    }
}

/// Connects with `url`'s TLS settings; on success, whether the session is encrypted.
async fn connect(url: &str) -> Result<(tokio_postgres::Client, bool), String> {
    let (config, tls) = connect_config(url).map_err(|e| e.to_string())?;
    let (client, connection) = config.connect(tls).await.map_err(|e| {
        let mut text = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(cause) = source {
            text.push_str(": ");
            text.push_str(&cause.to_string());
            source = cause.source();
        }
        text
    })?;
    tokio::spawn(connection);
    let row = client
        .query_one(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .await
        .map_err(|e| e.to_string())?;
    Ok((client, row.get(0)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_connection_is_refused_by_name() {
    let Some(s) = server() else { return };
    for url in [
        format!("{}?sslmode=disable", s.url),
        s.url.replace("localhost", "127.0.0.1"),
    ] {
        let (config, _) = connect_config(&url).unwrap();
        // What the command did before: a plain connection, whatever the URL asked for.
        let err = config
            .connect(tokio_postgres::NoTls)
            .await
            .err()
            .expect("refused");
        let db = err.as_db_error().expect("the server's refusal");
        assert_eq!(db.code().code(), "28000", "{db:?}");
        assert!(db.message().contains("no encryption"), "{}", db.message());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_encrypting_mode_connects_and_the_verifying_ones_check_ca_and_name() {
    let Some(s) = server() else { return };
    let ca = s.ca_file.display();
    let other = s.other_ca_file.display();
    let by_ip = s.url.replace("localhost", "127.0.0.1");
    for url in [
        s.url.clone(),
        format!("{}?sslmode=require", s.url),
        format!("{}?sslmode=require&sslrootcert={ca}", s.url),
        format!("{}?sslmode=verify-ca&sslrootcert={ca}", s.url),
        format!("{}?sslmode=verify-full&sslrootcert={ca}", s.url),
        // verify-ca does not check the name: reaching the server by address is fine.
        format!("{by_ip}?sslmode=verify-ca&sslrootcert={ca}"),
    ] {
        let (_, encrypted) = connect(&url).await.unwrap_or_else(|e| panic!("{url}: {e}"));
        assert!(encrypted, "{url}: not encrypted");
    }
    for (url, says) in [
        (
            format!("{}?sslmode=verify-full&sslrootcert={other}", s.url),
            "UnknownIssuer",
        ),
        (
            format!("{}?sslmode=verify-ca&sslrootcert={other}", s.url),
            "UnknownIssuer",
        ),
        (
            format!("{}?sslmode=require&sslrootcert={other}", s.url),
            "UnknownIssuer",
        ),
        (
            format!("{by_ip}?sslmode=verify-full&sslrootcert={ca}"),
            "not valid for name",
        ),
    ] {
        let err = connect(&url)
            .await
            .err()
            .unwrap_or_else(|| panic!("{url} connected"));
        assert!(err.contains(says), "{url}: {err}");
    }
}

async fn tls_store(s: &TlsPgServer, schema: &str) -> (PgClaimStore, tokio_postgres::Config, PgTls) {
    let url = format!(
        "{}?sslmode=verify-full&sslrootcert={}&application_name={schema}",
        s.url,
        s.ca_file.display()
    );
    let (config, tls) = connect_config(&url).unwrap();
    let (mut admin, _) = connect(&url).await.unwrap();
    admin
        .batch_execute(&format!("CREATE SCHEMA \"{schema}\""))
        .await
        .unwrap();
    let table = TableName::in_schema(schema, "outbox").unwrap();
    outbox_postgres::migrate(&mut admin, &table).await.unwrap();
    let manager = Manager::from_config(
        config.clone(),
        tls.clone(),
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    let pool = Pool::builder(manager).max_size(1).build().unwrap();
    let store = PgClaimStore::new(pool, PgStoreConfig::new().table(table).tls(tls.clone()))
        .await
        .unwrap();
    (store, config, tls)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_over_tls_claims_and_cancels_a_dropped_call_over_tls() {
    let Some(s) = server() else { return };
    let schema = format!("tls_{}", uuid::Uuid::new_v4().simple());
    let (store, config, tls) = tls_store(s, &schema).await;
    store
        .enqueue_batch((0..3u8).map(|i| NewEntry::new("t", vec![i])).collect())
        .await
        .unwrap();
    let req = ClaimRequest::new("w", 10, TimeDelta::seconds(30));
    let claims = store.claim_pending(&req).await.unwrap();
    assert_eq!(claims.len(), 3);
    let done = store
        .complete(CompletionRequest::new(
            claims[0].clone(),
            Completion::Delivered(EmissionResult::new()),
        ))
        .await
        .unwrap();
    assert!(done.is_applied());

    // A claim dropped while it waits on a lock is cancelled on the server: over TLS, as
    // the server refuses anything else. A cancel sent in the clear would be refused and
    // the statement would wait on, holding its place in the lock queue.
    let (observer, _) = connect(&format!("{}?sslmode=require", s.url))
        .await
        .unwrap();
    let mut locker_config = config.clone();
    locker_config.application_name("locker");
    let (locker, connection) = locker_config.connect(tls.clone()).await.unwrap();
    tokio::spawn(connection);
    locker.batch_execute("BEGIN").await.unwrap();
    locker
        .batch_execute(&format!(
            "LOCK TABLE \"{schema}\".\"outbox\" IN ACCESS EXCLUSIVE MODE"
        ))
        .await
        .unwrap();
    tokio::select! {
        result = store.claim_pending(&req) => panic!("the claim ran past the lock: {result:?}"),
        _pid = support::blocked_backend(&observer, &schema, Duration::from_secs(10)) => {}
    }
    support::until_quiet(&observer, &schema, Duration::from_secs(10)).await;
    locker.batch_execute("ROLLBACK").await.unwrap();
    observer
        .batch_execute(&format!("DROP SCHEMA \"{schema}\" CASCADE"))
        .await
        .unwrap();
}
