//! The PostgreSQL server the benches use: the one `OUTBOX_TEST_POSTGRES_URL` names, or else
//! a cluster of the bench's own with production settings (durable commits, the default
//! autovacuum and analyze), its address for the latency proxy, and what it is.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use outbox_testkit::postgres::{production_server, PgTestDb};

use crate::results::PgServerInfo;

/// The server's URL, or why there is none. Called before any schema is made, so the
/// bench's own cluster is the one with production settings.
pub fn url() -> Result<String, String> {
    production_server().map(|s| s.url.clone())
}

/// The driver configuration for `url`, connecting to `via` (a proxy) when given.
pub fn config(url: &str, via: Option<SocketAddr>) -> tokio_postgres::Config {
    outbox_testkit::postgres::client_config(url, "outbox-bench", via)
}

pub use outbox_testkit::postgres::server_addr;

/// A connected client on `url`.
pub async fn client(url: &str) -> tokio_postgres::Client {
    outbox_testkit::postgres::connect(url)
        .await
        .expect("connect to the bench server")
}

/// A fresh schema (dropped with its contents when the value is dropped).
pub async fn schema() -> Option<PgTestDb> {
    // Whoever asks first decides the server: make it the bench's (an error is reported
    // by the schema's own start just below).
    let _ = tokio::task::spawn_blocking(production_server).await;
    PgTestDb::create().await
}

/// The server's version and the settings that move the figures.
pub async fn info(url: &str) -> PgServerInfo {
    let client = client(url).await;
    let version: String = client
        .query_one("SELECT version()", &[])
        .await
        .map(|r| r.get(0))
        .unwrap_or_default();
    let mut settings = Vec::new();
    for name in [
        "fsync",
        "synchronous_commit",
        "shared_buffers",
        "autovacuum",
        "max_connections",
    ] {
        if let Ok(row) = client
            .query_one("SELECT current_setting($1)", &[&name])
            .await
        {
            settings.push((name.to_owned(), row.get::<_, String>(0)));
        }
    }
    PgServerInfo {
        version,
        url: outbox_core::redact_url(url),
        settings,
    }
}

/// The median `SELECT 1` round trip, in milliseconds, through a proxy adding `latency_ms`.
pub async fn round_trip_ms(url: &str, latency_ms: u32) -> f64 {
    use outbox_testkit::proxy::{PgProxy, ProxyConfig};
    let latency = Duration::from_millis(u64::from(latency_ms));
    let proxy = PgProxy::start(
        server_addr(url),
        ProxyConfig::new().round_trip_latency(latency),
    )
    .await
    .expect("start the latency proxy");
    let (client, connection) = config(url, Some(proxy.local_addr()))
        .connect(tokio_postgres::NoTls)
        .await
        .expect("connect through the proxy");
    tokio::spawn(connection);
    let mut samples = Vec::new();
    for _ in 0..50 {
        let started = std::time::Instant::now();
        client.simple_query("SELECT 1").await.expect("ping");
        samples.push(started.elapsed());
    }
    crate::stats::percentile_ms(&mut samples, 0.5)
}

/// `pgbench` from the server binaries the testkit would use, or from `PATH`.
pub fn pgbench() -> Option<PathBuf> {
    program("pgbench")
}

/// `psql` from the server binaries the testkit would use, or from `PATH`.
pub fn psql() -> Option<PathBuf> {
    program("psql")
}

/// A PostgreSQL client program: the newest server's binaries first, then `PATH`.
fn program(name: &str) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("bin"))
        .collect();
    dirs.sort();
    dirs.reverse();
    if let Ok(path) = std::env::var("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    dirs.into_iter().map(|d| d.join(name)).find(|p| p.is_file())
}
