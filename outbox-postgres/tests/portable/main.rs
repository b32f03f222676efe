//! The portable store (`outbox_core::portable`) on a real PostgreSQL server: the
//! conformance suite, its command count measured from sqlx's statement log, contention,
//! the race harness, enqueue inside the host's transaction, and calls abandoned at their
//! deadline. Each test gets a fresh schema from `PgTestDb`; without a server the tests
//! are reported loudly as skipped (and fail when `OUTBOX_TEST_REQUIRE=postgres`).

mod cancellation;

use std::sync::Arc;

use outbox_core::portable::PortableConfig;
use outbox_core::{ClaimStore, NewEntry, OutboxError, OutboxStore, TableName};
use outbox_postgres::PortablePgStore;
use outbox_testkit::fixtures::{claim_ids, claim_req, ids, seed, t0, DynStore};
use outbox_testkit::postgres::PgTestDb;
use outbox_testkit::race::{claim_and_complete, RaceConfig};
use outbox_testkit::statement_log;
use outbox_testkit::{HookFuture, InterleaveHook, Subject};
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

/// The suite's interleave hook: the store runs the writer inside its next claim or
/// completion, between that row's check and its write.
struct Hook(PortablePgStore);

impl InterleaveHook for Hook {
    fn before_next_write(&self, writer: HookFuture) {
        self.0.interleave_before_next_write(writer);
    }
}

/// `None` when no server can be had (already reported by `PgTestDb::create`).
async fn portable_subject() -> Option<Subject> {
    let db = PgTestDb::create().await?;
    let store = portable_store(&db, "outbox", 4).await;
    Some(
        Subject::new(Arc::new(store.clone()))
            .with_interleave(Arc::new(Hook(store)))
            .with_guard(db),
    )
}

outbox_testkit::conformance_suite!(portable_subject);

/// The keyed suites' factory: a table prepared for ordered claims, whose key index the
/// portable claim's key check seeks in.
async fn portable_ordered_subject() -> Option<Subject> {
    let db = PgTestDb::create().await?;
    let store = portable_store(&db, "outbox", 4).await;
    outbox_postgres::enable_ordered_claims(&mut db.connect().await, store.table())
        .await
        .unwrap();
    Some(
        Subject::new(Arc::new(store.clone()))
            .with_interleave(Arc::new(Hook(store)))
            .with_guard(db),
    )
}

outbox_testkit::ordered_suite!(portable_ordered_subject);
outbox_testkit::slice_suite!(portable_ordered_subject);

async fn portable_admin() -> Option<(outbox_testkit::admin_cases::AdminStore, PgTestDb)> {
    let db = PgTestDb::create().await?;
    let store = portable_store(&db, "outbox", 4).await;
    Some((Arc::new(store), db))
}

outbox_testkit::admin_suite!(portable_admin);

async fn portable_ordered_admin() -> Option<(outbox_testkit::admin_cases::AdminStore, PgTestDb)> {
    let db = PgTestDb::create().await?;
    let store = portable_store(&db, "outbox", 4).await;
    outbox_postgres::enable_ordered_claims(&mut db.connect().await, store.table())
        .await
        .unwrap();
    Some((Arc::new(store), db))
}

outbox_testkit::ordered_admin_suite!(portable_ordered_admin);

/// The claim path costs exactly 1 + 2N statements for N uncontended winners, measured
/// from sqlx's statement log, and every claim is persisted as returned.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claim_costs_one_plus_two_statements_per_row() {
    const TABLE: &str = "count_outbox";
    let statements = statement_log::watch(TABLE);
    let Some(db) = PgTestDb::create().await else {
        return;
    };
    let store = portable_store(&db, TABLE, 2).await;
    statement_log::assert_per_row_claim_cost(
        "portable-postgres",
        &(Arc::new(store) as DynStore),
        &statements,
    )
    .await;
}

/// A second worker takes rows between this worker's candidate query and its writes: the
/// row it took first is lost at the stamp check, the next is skipped at the re-read, and
/// only the row this worker won comes back. The statement count shows what each costs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_taken_by_another_worker_mid_claim_are_skipped() {
    const TABLE: &str = "contended_outbox";
    let statements = statement_log::watch(TABLE);
    let Some(db) = PgTestDb::create().await else {
        return;
    };
    let a = portable_store(&db, TABLE, 2).await;
    let b = portable_store(&db, TABLE, 2).await;
    let a_dyn: DynStore = Arc::new(a.clone());
    let written = seed(&a_dyn, 3).await;
    let (tx, rx) = tokio::sync::oneshot::channel();
    a.interleave_before_next_write(Box::pin(async move {
        let taken = b.claim_pending(&claim_req("b", 2, t0())).await.unwrap();
        tx.send(taken).unwrap();
    }));
    let before = statement_log::read(&statements);
    let won = a.claim_pending(&claim_req("a", 3, t0())).await.unwrap();
    let used = statement_log::read(&statements) - before;
    let taken = rx.await.expect("the interleaved worker ran");
    println!(
        "contended claim: {used} statements (worker a: 1 + 2 lost at the update + 1 \
         skipped at the re-read + 2 won = 6; worker b: 1 + 2x2 = 5)"
    );
    assert_eq!(claim_ids(&taken), ids(&written[..2]));
    assert_eq!(claim_ids(&won), ids(&written[2..]));
    assert_eq!(used, 11);
    for claim in taken.iter().chain(&won) {
        let row = a.get(claim.id()).await.unwrap().unwrap();
        assert_eq!(row, *claim.entry, "the durable lease is not the winner's");
    }
}

/// Eight workers on one table: no entry is leased twice at once, and every entry is
/// delivered exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn race_eight_workers_ten_thousand_entries() {
    let Some(db) = PgTestDb::create().await else {
        return;
    };
    let store = portable_store(&db, "outbox", 10).await;
    let report = claim_and_complete(Arc::new(store), RaceConfig::default()).await;
    println!("portable-postgres race: {report:?}");
    assert_eq!(report.delivered, 10_000);
}

/// Eight workers drain 1,000 keys in per-key order through the per-row claim, some
/// emissions outliving their leases: every key's emissions come out in creation order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_workers_drain_a_thousand_keys_in_order() {
    let Some(db) = PgTestDb::create().await else {
        return;
    };
    let store = portable_store(&db, "outbox", 10).await;
    outbox_postgres::enable_ordered_claims(&mut db.connect().await, store.table())
        .await
        .unwrap();
    outbox_testkit::race_ordered::eight_workers_a_thousand_keys(
        "portable-postgres",
        Arc::new(store),
    )
    .await;
}

/// Leases shorter than some emissions: entries are reclaimed under slow holders and
/// renewals race the reclaims; the per-row store too applies only the last holder's
/// completion.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn leases_that_expire_under_slow_emissions_never_let_a_stale_holder_complete() {
    let Some(db) = PgTestDb::create().await else {
        return;
    };
    let store = portable_store(&db, "outbox", 8).await;
    let report = outbox_testkit::race::expiring_leases(
        Arc::new(store),
        outbox_testkit::race::ExpiryRaceConfig::default(),
    )
    .await;
    assert!(
        report.reclaimed > 0,
        "no lease ran out under a slow emission: {report:?}"
    );
}

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
    fails_within_the_deadline("the stats", DEADLINE, store.stats(None)).await;
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
