//! The portable store (`outbox_core::portable`) on real SQLite files: the conformance
//! suite, its command count measured from sqlx's statement log, contention, the race
//! harness, switching to the optimized store on the same table, enqueue inside the
//! host's transaction, and an enqueue abandoned at its deadline.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use outbox_core::portable::PortableConfig;
use outbox_core::{ClaimStore, NewEntry, OutboxError, OutboxStore, TableName};
use outbox_sqlite::PortableSqliteStore;
use outbox_testkit::fixtures::{claim_ids, claim_req, ids, seed, t0, DynStore};
use outbox_testkit::race::{claim_and_complete, RaceConfig};
use outbox_testkit::statement_log;
use outbox_testkit::{HookFuture, InterleaveHook, Subject};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::SqlitePool;

/// Opens `path` in WAL mode with a busy timeout, with up to `connections` connections.
async fn open_pool(path: &Path, connections: u32) -> SqlitePool {
    let options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(Duration::from_secs(30));
    SqlitePoolOptions::new()
        .max_connections(connections)
        .connect_with(options)
        .await
        .expect("open the SQLite file")
}

/// A migrated table `table` in a fresh file under `dir`, and a portable store on it.
async fn portable_store(dir: &Path, table: &str, connections: u32) -> PortableSqliteStore {
    let pool = open_pool(&dir.join("outbox.db"), connections).await;
    let table = TableName::new(table).unwrap();
    outbox_sqlite::migrate(&pool, &table).await.unwrap();
    outbox_sqlite::portable_store(pool, PortableConfig::default().table(table))
        .await
        .unwrap()
}

/// The suite's interleave hook: the store runs the writer inside its next claim or
/// completion, between that row's check and its write.
struct Hook(PortableSqliteStore);

impl InterleaveHook for Hook {
    fn before_next_write(&self, writer: HookFuture) {
        self.0.interleave_before_next_write(writer);
    }
}

async fn portable_subject() -> Subject {
    let dir = tempfile::tempdir().unwrap();
    let store = portable_store(dir.path(), "outbox", 4).await;
    Subject::new(Arc::new(store.clone()))
        .with_interleave(Arc::new(Hook(store)))
        .with_guard(dir)
}

outbox_testkit::conformance_suite!(portable_subject);

/// The keyed suites' factory: a table prepared for ordered claims, whose key index the
/// portable claim's key check seeks in.
async fn portable_ordered_subject() -> Subject {
    let dir = tempfile::tempdir().unwrap();
    let store = portable_store(dir.path(), "outbox", 4).await;
    outbox_sqlite::enable_ordered_claims(store.backend().pool(), store.table())
        .await
        .unwrap();
    Subject::new(Arc::new(store.clone()))
        .with_interleave(Arc::new(Hook(store)))
        .with_guard(dir)
}

outbox_testkit::ordered_suite!(portable_ordered_subject);
outbox_testkit::slice_suite!(portable_ordered_subject);

async fn portable_admin() -> Option<(outbox_testkit::admin_cases::AdminStore, tempfile::TempDir)> {
    let dir = tempfile::tempdir().unwrap();
    let store = portable_store(dir.path(), "outbox", 4).await;
    Some((Arc::new(store), dir))
}

outbox_testkit::admin_suite!(portable_admin);

async fn portable_ordered_admin(
) -> Option<(outbox_testkit::admin_cases::AdminStore, tempfile::TempDir)> {
    let dir = tempfile::tempdir().unwrap();
    let store = portable_store(dir.path(), "outbox", 4).await;
    outbox_sqlite::enable_ordered_claims(store.backend().pool(), store.table())
        .await
        .unwrap();
    Some((Arc::new(store), dir))
}

outbox_testkit::ordered_admin_suite!(portable_ordered_admin);

/// The claim path costs exactly 1 + 2N statements for N uncontended winners, measured
/// from sqlx's statement log, and every claim is persisted as returned.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claim_costs_one_plus_two_statements_per_row() {
    const TABLE: &str = "count_outbox";
    let statements = statement_log::watch(TABLE);
    let dir = tempfile::tempdir().unwrap();
    let store = portable_store(dir.path(), TABLE, 2).await;
    statement_log::assert_per_row_claim_cost(
        "portable-sqlite",
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
    let dir = tempfile::tempdir().unwrap();
    let a = portable_store(dir.path(), TABLE, 2).await;
    let b = portable_store(dir.path(), TABLE, 2).await;
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

/// Eight workers, several connections, one file: no entry is leased twice at once, and
/// every entry is delivered exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn race_eight_workers_ten_thousand_entries() {
    let dir = tempfile::tempdir().unwrap();
    let store = portable_store(dir.path(), "outbox", 8).await;
    let report = claim_and_complete(Arc::new(store), RaceConfig::default()).await;
    println!("portable-sqlite race: {report:?}");
    assert_eq!(report.delivered, 10_000);
}

/// Eight workers drain 1,000 keys in per-key order through the per-row claim, some
/// emissions outliving their leases: every key's emissions come out in creation order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_workers_drain_a_thousand_keys_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let store = portable_store(dir.path(), "outbox", 8).await;
    outbox_sqlite::enable_ordered_claims(store.backend().pool(), store.table())
        .await
        .unwrap();
    outbox_testkit::race_ordered::eight_workers_a_thousand_keys("portable-sqlite", Arc::new(store))
        .await;
}

/// Leases shorter than some emissions: entries are reclaimed under slow holders and
/// renewals race the reclaims; the per-row store too applies only the last holder's
/// completion.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn leases_that_expire_under_slow_emissions_never_let_a_stale_holder_complete() {
    let dir = tempfile::tempdir().unwrap();
    let store = portable_store(dir.path(), "outbox", 6).await;
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

/// Rows written by either store are read back identically by the other on the same
/// table, and work started by one can be finished by the other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_survive_a_switch_to_and_from_the_optimized_store() {
    let dir = tempfile::tempdir().unwrap();
    let portable = portable_store(dir.path(), "outbox", 4).await;
    let optimized = outbox_sqlite::SqliteClaimStore::new(
        portable.backend().pool().clone(),
        outbox_sqlite::SqliteStoreConfig::default(),
    )
    .await
    .unwrap();
    let new = NewEntry::new("orders", vec![0u8, 255, 7])
        .partition_key("k")
        .header("h", "v")
        .not_before(t0() - chrono::TimeDelta::seconds(5))
        .created_at(t0() - chrono::TimeDelta::seconds(9));
    let written = portable.enqueue(new).await.unwrap();
    assert_eq!(
        optimized.get(written.id).await.unwrap(),
        Some(written.clone())
    );
    let claim = portable
        .claim_pending(&claim_req("p", 1, t0()))
        .await
        .unwrap()
        .remove(0);
    assert_eq!(
        optimized.get(claim.id()).await.unwrap(),
        Some((*claim.entry).clone())
    );
    let failed = optimized
        .mark_failed(&claim, outbox_testkit::fixtures::boom(), Some(t0()))
        .await
        .unwrap();
    assert!(failed.is_applied(), "{failed:?}");
    assert_eq!(portable.get(claim.id()).await.unwrap(), Some(failed.entry));
    let retry = portable
        .claim_retry_ready(&claim_req("p", 1, t0()))
        .await
        .unwrap();
    assert_eq!(claim_ids(&retry), vec![claim.id()]);
    assert_eq!(
        optimized.get(claim.id()).await.unwrap(),
        Some((*retry[0].entry).clone())
    );
}

/// The outbox rows of a host transaction commit and roll back with the host's own rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enqueue_in_the_host_transaction_commits_or_rolls_back_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = portable_store(dir.path(), "outbox", 2).await;
    let pool = store.backend().pool().clone();
    sqlx::raw_sql("CREATE TABLE orders (id INTEGER PRIMARY KEY)")
        .execute(&pool)
        .await
        .unwrap();
    let count = |sql: &'static str| {
        let pool = pool.clone();
        async move {
            sqlx::query_scalar::<_, i64>(sql)
                .fetch_one(&pool)
                .await
                .unwrap()
        }
    };

    let mut tx = pool.begin().await.unwrap();
    sqlx::query("INSERT INTO orders (id) VALUES (1)")
        .execute(&mut *tx)
        .await
        .unwrap();
    let doomed = store
        .enqueue_in(&mut *tx, vec![NewEntry::new("orders", b"1".to_vec())])
        .await
        .unwrap();
    tx.rollback().await.unwrap();
    assert_eq!(store.get(doomed[0].id).await.unwrap(), None);
    assert_eq!(count("SELECT count(*) FROM orders").await, 0);
    assert_eq!(count("SELECT count(*) FROM outbox").await, 0);

    let mut tx = pool.begin().await.unwrap();
    sqlx::query("INSERT INTO orders (id) VALUES (2)")
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
    assert_eq!(count("SELECT count(*) FROM orders").await, 1);
    assert_eq!(count("SELECT count(*) FROM outbox").await, 2);
    for entry in &kept {
        assert_eq!(store.get(entry.id).await.unwrap().as_ref(), Some(entry));
    }
}

/// A table that was never migrated is refused when the store is built.
#[tokio::test]
async fn an_unmigrated_table_is_refused_at_construction() {
    let dir = tempfile::tempdir().unwrap();
    let pool = open_pool(&dir.path().join("empty.db"), 1).await;
    let err = outbox_sqlite::portable_store(pool, PortableConfig::default())
        .await
        .unwrap_err();
    assert!(
        matches!(err, OutboxError::SchemaNotMigrated { .. }),
        "{err}"
    );
}

/// An enqueue abandoned at its deadline (`Bounded`) while another connection holds the
/// file's write lock: the abandoned call's transaction never commits (its connection is
/// closed, which rolls it back, once the insert it was waiting in gets the lock), the
/// lock's holder commits, and the pool's one connection is usable again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_enqueue_abandoned_on_the_write_lock_writes_nothing() {
    use outbox_core::Bounded;
    use sqlx::{Connection, SqliteConnection};

    const DEADLINE: Duration = Duration::from_millis(300);
    let dir = tempfile::tempdir().unwrap();
    let store = Bounded::new(portable_store(dir.path(), "outbox", 1).await, DEADLINE).unwrap();
    let options = SqliteConnectOptions::new().filename(dir.path().join("outbox.db"));
    let mut holder = SqliteConnection::connect_with(&options).await.unwrap();
    sqlx::query("BEGIN IMMEDIATE")
        .execute(&mut holder)
        .await
        .unwrap();
    let doomed = NewEntry::new("t", b"doomed".to_vec());
    let doomed_id = doomed.id;
    outbox_testkit::faults::fails_within_the_deadline(
        "an enqueue waiting on the write lock",
        DEADLINE,
        store.enqueue_batch(vec![doomed]),
    )
    .await;
    sqlx::query("COMMIT").execute(&mut holder).await.unwrap();

    let started = std::time::Instant::now();
    let kept = loop {
        match store
            .enqueue_batch(vec![NewEntry::new("t", b"kept".to_vec())])
            .await
        {
            Ok(written) => break written,
            Err(e) => {
                assert!(started.elapsed() < Duration::from_secs(30), "not back: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    assert_eq!(
        store.get(kept[0].id).await.unwrap().as_ref(),
        Some(&kept[0])
    );
    // Read on a connection of its own, after the abandoned call's has gone.
    let (rows,): (i64,) = sqlx::query_as("SELECT count(*) FROM outbox")
        .fetch_one(&mut holder)
        .await
        .unwrap();
    assert_eq!(rows, 1, "the abandoned enqueue was committed");
    assert_eq!(store.get(doomed_id).await.unwrap(), None);
}
