//! The portable store (`outbox_core::portable`) on a real PostgreSQL server: the
//! testkit's portable cases (`portable_suite!`: the suites, the command count from sqlx's
//! statement log, contention, the races, a switch to the optimized store), then what only
//! PostgreSQL has: enqueue inside the host's transaction, a table never migrated, and
//! calls abandoned at their deadline. Each test gets a fresh schema from `PgTestDb`; without a server the tests
//! are reported loudly as skipped (and fail when `OUTBOX_TEST_REQUIRE=postgres`).

mod cancellation;

use std::sync::Arc;

use outbox_core::portable::PortableConfig;
use outbox_core::{async_trait, ClaimStore, NewEntry, OutboxError, OutboxStore, TableName};
use outbox_postgres::{PgBackend, PortablePgStore};
use outbox_testkit::fixtures::DynStore;
use outbox_testkit::portable_cases::PortableEngine;
use outbox_testkit::postgres::PgTestDb;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

/// `table` in the test's schema, migrated.
async fn migrated(db: &PgTestDb, table: &str) -> TableName {
    let table = TableName::in_schema(&db.schema, table).unwrap();
    outbox_postgres::migrate(&mut db.connect().await, &table)
        .await
        .unwrap();
    table
}

/// The test server's connect options, with the server reached through `proxy`.
fn through(db: &PgTestDb, proxy: &outbox_testkit::tcp_proxy::TcpProxy) -> PgConnectOptions {
    let options: PgConnectOptions = db.url.parse().unwrap();
    options.host("127.0.0.1").port(proxy.local_addr().port())
}

/// Migrates `table` in the test's schema and builds a portable store on a pool of up to
/// `connections` connections.
async fn portable_store(db: &PgTestDb, table: &str, connections: u32) -> PortablePgStore {
    let table = migrated(db, table).await;
    let pool = PgPoolOptions::new()
        .max_connections(connections)
        .connect(&db.url)
        .await
        .expect("connect to the test server");
    outbox_postgres::portable_store(pool, PortableConfig::default().table(table))
        .await
        .unwrap()
}

/// PostgreSQL as the portable cases see it: a fresh schema per test on the test server.
struct Postgres;

#[async_trait]
impl PortableEngine for Postgres {
    type Backend = PgBackend;
    type Guard = PgTestDb;
    const NAME: &'static str = "portable-postgres";
    const RACE_CONNECTIONS: u32 = 10;

    async fn database() -> Option<PgTestDb> {
        PgTestDb::create().await
    }

    async fn store(db: &PgTestDb, table: &str, connections: u32) -> PortablePgStore {
        portable_store(db, table, connections).await
    }

    async fn enable_ordered_claims(db: &PgTestDb, store: &PortablePgStore) {
        outbox_postgres::enable_ordered_claims(&mut db.connect().await, store.table())
            .await
            .unwrap();
    }

    async fn erase_slice_hashes(_: &PgTestDb, store: &PortablePgStore) {
        let sql = store.table().render("UPDATE {table} SET slice_hash = NULL");
        sqlx::query(&sql)
            .execute(store.backend().pool())
            .await
            .unwrap();
    }

    async fn optimized(db: &PgTestDb, store: &PortablePgStore) -> DynStore {
        use outbox_postgres::{deadpool_postgres as deadpool, tokio_postgres};
        let config: tokio_postgres::Config = db.url.parse().unwrap();
        let manager = deadpool::Manager::new(config, tokio_postgres::NoTls);
        let pool = deadpool::Pool::builder(manager)
            .max_size(2)
            .build()
            .unwrap();
        let config = outbox_postgres::PgStoreConfig::default().table(store.table().clone());
        Arc::new(
            outbox_postgres::PgClaimStore::new(pool, config)
                .await
                .unwrap(),
        )
    }
}

outbox_testkit::portable_suite!(Postgres);

/// The outbox rows of a host transaction commit and roll back with the host's own rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enqueue_in_the_host_transaction_commits_or_rolls_back_with_it() {
    let Some(db) = PgTestDb::create().await else {
        return;
    };
    let store = portable_store(&db, "outbox", 2).await;
    let pool = store.backend().pool().clone();
    let orders = format!("\"{}\".orders", db.schema);
    let outbox = store.table().qualified();
    sqlx::raw_sql(&format!("CREATE TABLE {orders} (id integer PRIMARY KEY)"))
        .execute(&pool)
        .await
        .unwrap();
    let count = |table: &str| {
        let (pool, sql) = (pool.clone(), format!("SELECT count(*) FROM {table}"));
        async move {
            sqlx::query_scalar::<_, i64>(&sql)
                .fetch_one(&pool)
                .await
                .unwrap()
        }
    };

    let mut tx = pool.begin().await.unwrap();
    sqlx::query(&format!("INSERT INTO {orders} (id) VALUES (1)"))
        .execute(&mut *tx)
        .await
        .unwrap();
    let doomed = store
        .enqueue_in(&mut *tx, vec![NewEntry::new("orders", b"1".to_vec())])
        .await
        .unwrap();
    tx.rollback().await.unwrap();
    assert_eq!(store.get(doomed[0].id).await.unwrap(), None);
    assert_eq!(count(&orders).await, 0);
    assert_eq!(count(&outbox).await, 0);

    let mut tx = pool.begin().await.unwrap();
    sqlx::query(&format!("INSERT INTO {orders} (id) VALUES (2)"))
        .execute(&mut *tx)
        .await
        .unwrap();
    let kept = store
        .enqueue_in(
            &mut *tx,
            vec![
                NewEntry::new("orders", b"2".to_vec()),
                NewEntry::new("orders", b"3".to_vec()),
            ],
        )
        .await
        .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(count(&orders).await, 1);
    assert_eq!(count(&outbox).await, 2);
    for entry in &kept {
        assert_eq!(store.get(entry.id).await.unwrap().as_ref(), Some(entry));
    }
}

/// A table that was never migrated is refused when the store is built.
#[tokio::test]
async fn an_unmigrated_table_is_refused_at_construction() {
    let Some(db) = PgTestDb::create().await else {
        return;
    };
    let pool = PgPoolOptions::new()
        .max_connections(1)
        .connect(&db.url)
        .await
        .unwrap();
    let table = TableName::in_schema(&db.schema, "outbox").unwrap();
    let err = outbox_postgres::portable_store(pool, PortableConfig::default().table(table))
        .await
        .unwrap_err();
    assert!(
        matches!(err, OutboxError::SchemaNotMigrated { .. }),
        "{err}"
    );
}

/// A server that stops answering (a black-holed path): the portable store has no deadline
/// of its own; wrapped in `Bounded`, each call fails within the deadline, and once the
/// path heals the same store works again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bounded_calls_fail_within_their_deadline_through_a_black_hole() {
    use std::time::{Duration, Instant};

    use outbox_core::{Bounded, ClaimRequest, OutboxAdmin};
    use outbox_testkit::tcp_proxy::TcpProxy;

    const DEADLINE: Duration = Duration::from_millis(500);
    let Some(db) = PgTestDb::create().await else {
        return;
    };
    let table = migrated(&db, "outbox").await;
    let proxy = TcpProxy::start(outbox_testkit::postgres::server_addr(&db.url))
        .await
        .unwrap();
    let pool = PgPoolOptions::new()
        .max_connections(2)
        .acquire_timeout(Duration::from_secs(60))
        .connect_with(through(&db, &proxy))
        .await
        .unwrap();
    let portable = outbox_postgres::portable_store(pool, PortableConfig::default().table(table))
        .await
        .unwrap();
    let store = Bounded::new(portable, DEADLINE).unwrap();
    let written = store
        .enqueue_batch((0..3u8).map(|i| NewEntry::new("t", vec![i])).collect())
        .await
        .unwrap();

    proxy.black_hole();
    let claim = ClaimRequest::new("w", 10, chrono::TimeDelta::seconds(30));
    use outbox_testkit::faults::fails_within_the_deadline;
    fails_within_the_deadline("a claim", DEADLINE, store.claim_next(&claim)).await;
    fails_within_the_deadline(
        "the stats",
        DEADLINE,
        store.stats(&outbox_core::StatsRequest::new()),
    )
    .await;
    fails_within_the_deadline("a read", DEADLINE, store.get(written[0].id)).await;

    proxy.restore();
    // The calls abandoned in the black hole left their connections to be replaced; the
    // store comes back once new ones are made.
    let healed = Instant::now();
    let claims = loop {
        match store.claim_next(&claim).await {
            Ok(claims) => break claims,
            Err(e) => {
                assert!(healed.elapsed() < Duration::from_secs(30), "not back: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };
    assert_eq!(claims.len(), 3, "every entry claimable after the outage");
}
