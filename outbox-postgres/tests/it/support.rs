//! Shared set-up: a migrated schema per test, pools and stores on it, and a way to find
//! the store's own server processes among everyone else's.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use outbox_core::TableName;
use outbox_postgres::{ListenSession, PgClaimStore, PgListener, PgStoreConfig};
use outbox_testkit::postgres::PgTestDb;

/// The outbox table of a test's schema.
pub(crate) fn table(db: &PgTestDb) -> TableName {
    TableName::in_schema(&db.schema, "outbox").expect("valid test table name")
}

/// A fresh schema with the outbox migrated into it; `None` (reported loudly) without a
/// server.
pub(crate) async fn migrated_db() -> Option<PgTestDb> {
    let db = PgTestDb::create().await?;
    let mut client = db.connect().await;
    outbox_postgres::migrate(&mut client, &table(&db))
        .await
        .expect("migrate");
    Some(db)
}

/// Like [`migrated_db`], with the table prepared for claims in per-key order.
pub(crate) async fn ordered_db() -> Option<PgTestDb> {
    let db = migrated_db().await?;
    let mut client = db.connect().await;
    outbox_postgres::enable_ordered_claims(&mut client, &table(&db))
        .await
        .expect("enable ordered claims");
    Some(db)
}

/// The driver configuration for the test server, tagged with `application_name` so a
/// test can find its own backends in `pg_stat_activity`.
pub(crate) fn pg_config(url: &str, application_name: &str) -> tokio_postgres::Config {
    outbox_testkit::postgres::client_config(url, application_name, None)
}

/// Like [`pg_config`], but connecting to `addr` (a proxy) instead of the server.
pub(crate) fn pg_config_via(
    url: &str,
    application_name: &str,
    addr: SocketAddr,
) -> tokio_postgres::Config {
    outbox_testkit::postgres::client_config(url, application_name, Some(addr))
}

pub(crate) use outbox_testkit::postgres::server_addr;

/// The topics of the rows flagged as their key's head, sorted; only those not yet
/// terminal when `unfinished` (a finished head may keep its flag).
pub(crate) async fn flagged_topics(db: &PgTestDb, unfinished: bool) -> Vec<String> {
    let client = db.connect().await;
    let sql = if unfinished {
        "SELECT topic FROM {table} WHERE is_head AND status NOT IN (1, 5) ORDER BY topic"
    } else {
        "SELECT topic FROM {table} WHERE is_head ORDER BY topic"
    };
    client
        .query(&table(db).render(sql), &[])
        .await
        .expect("read the head flags")
        .iter()
        .map(|r| r.get(0))
        .collect()
}

/// The topics of what `request` claims from `store`, sorted.
pub(crate) async fn claimed_topics(
    store: &PgClaimStore,
    request: &outbox_core::ClaimRequest,
) -> Vec<String> {
    use outbox_core::ClaimStore;
    let mut topics: Vec<String> = store
        .claim_pending(request)
        .await
        .expect("claim")
        .iter()
        .map(|c| c.entry.topic.clone())
        .collect();
    topics.sort();
    topics
}

/// A connection to the test server tagged with the test's schema as its application name,
/// so that [`blocked_backend`] finds it when it waits on a lock.
pub(crate) async fn tagged_client(db: &PgTestDb) -> tokio_postgres::Client {
    let (client, connection) = pg_config(&db.url, &db.schema)
        .connect(tokio_postgres::NoTls)
        .await
        .expect("connect to the test server");
    tokio::spawn(connection);
    client
}

/// A pool of at most `size` connections made from `config`; `Fast` recycling, since the
/// store itself never returns a connection whose statement may still be running.
pub(crate) fn pool(config: tokio_postgres::Config, size: usize) -> Pool {
    let manager = Manager::from_config(
        config,
        tokio_postgres::NoTls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    Pool::builder(manager)
        .max_size(size)
        .build()
        .expect("build pool")
}

/// A store on the test's table over a pool of `size` connections, its backends tagged
/// with the schema's name.
pub(crate) async fn store(db: &PgTestDb, size: usize) -> PgClaimStore {
    store_with(
        db,
        pool(pg_config(&db.url, &db.schema), size),
        PgStoreConfig::default(),
    )
    .await
}

/// A store on the test's table over `pool`, with `config` (whose table is replaced).
pub(crate) async fn store_with(db: &PgTestDb, pool: Pool, config: PgStoreConfig) -> PgClaimStore {
    PgClaimStore::new(pool, config.table(table(db)))
        .await
        .expect("build store")
}

/// A proxy in front of the test server, and a store on the test's table whose single
/// connection goes through it (so the proxy sees, and can disturb, every call).
pub(crate) async fn proxied_store(db: &PgTestDb) -> (outbox_testkit::proxy::PgProxy, PgClaimStore) {
    let proxy = outbox_testkit::proxy::PgProxy::start(
        server_addr(&db.url),
        outbox_testkit::proxy::ProxyConfig::new(),
    )
    .await
    .expect("start proxy");
    let config = pg_config_via(&db.url, &db.schema, proxy.local_addr());
    let store = store_with(db, pool(config, 1), PgStoreConfig::default()).await;
    (proxy, store)
}

/// How many server processes with this `application_name` exist, and how many of them
/// are inside a transaction or hold any lock.
pub(crate) async fn backends(
    observer: &tokio_postgres::Client,
    application_name: &str,
) -> (i64, i64) {
    let row = observer
        .query_one(
            "SELECT count(*), count(*) FILTER (WHERE a.xact_start IS NOT NULL OR EXISTS \
             (SELECT 1 FROM pg_locks l WHERE l.pid = a.pid AND l.locktype <> 'virtualxid')) \
             FROM pg_stat_activity a WHERE a.application_name = $1 AND a.pid <> pg_backend_pid()",
            &[&application_name],
        )
        .await
        .expect("read pg_stat_activity");
    (row.get(0), row.get(1))
}

/// Waits (polling the server, up to `within`) until a backend tagged `application_name`
/// is blocked waiting for a lock; returns its pid.
pub(crate) async fn blocked_backend(
    observer: &tokio_postgres::Client,
    application_name: &str,
    within: Duration,
) -> i32 {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let row = observer
            .query_opt(
                "SELECT pid FROM pg_stat_activity \
                 WHERE application_name = $1 AND wait_event_type = 'Lock' LIMIT 1",
                &[&application_name],
            )
            .await
            .expect("read pg_stat_activity");
        if let Some(row) = row {
            return row.get(0);
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no backend of {application_name} blocked on a lock within {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Waits (polling, up to `within`) until no backend tagged `application_name` is in a
/// transaction or holds a lock.
pub(crate) async fn until_quiet(
    observer: &tokio_postgres::Client,
    application_name: &str,
    within: Duration,
) {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let (_, busy) = backends(observer, application_name).await;
        if busy == 0 {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{busy} backend(s) of {application_name} still in a transaction or holding locks after {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A listener on the test table's channel, connected to the server directly (its backend
/// named `<schema>-listen`), once it listens: its first session.
pub(crate) async fn listening(db: &PgTestDb) -> (Arc<PgListener>, ListenSession) {
    let listener = Arc::new(PgListener::start(
        pg_config(&db.url, &format!("{}-listen", db.schema)),
        tokio_postgres::NoTls,
        &table(db),
    ));
    let first = listener
        .wait_for_session(0, Duration::from_secs(10))
        .await
        .expect("the listener listens");
    (listener, first)
}
