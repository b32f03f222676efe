//! The drain's hot statements cost their batch, not the backlog, the history or the parked
//! retries, whatever the table's statistics say: never analyzed (a burst lands between two
//! autovacuum runs), analyzed (what autovacuum does to any busy table), or analyzed before
//! a burst and stale since. Each case claims 100 rows through the table's function, then
//! renews and completes them, and judges every call by what it read of the table: the
//! buffers `EXPLAIN (ANALYZE, BUFFERS)` reports for the claim, and for all three the
//! table's own per-transaction counters (sequential scans, rows fetched through indexes).
//! An O(table) plan shows in either: a hash join over a full primary-key walk fetches
//! every row, a sequential scan counts one scan.

use tokio_postgres::Client;
use uuid::Uuid;

use crate::support;
use outbox_testkit::postgres::PgTestDb;

const BATCH: i64 = 100;

/// Buffers one claim of 100 may touch: its index walk, about 100 heap rows locked and
/// rewritten, and their primary-key lookups. An O(backlog) plan touches tens of thousands.
pub(crate) const BUFFERS: i64 = 2_500;

/// What the table's statistics say when the claim is planned.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Stats {
    /// Never analyzed: the planner guesses.
    Never,
    /// Analyzed after the load, as autovacuum leaves a table.
    Analyzed,
}

/// A fresh migrated table that autovacuum will never touch during the test: the test
/// decides when it is analyzed.
pub(crate) async fn table() -> Option<(PgTestDb, Client)> {
    let db = support::migrated_db().await?;
    let client = db.connect().await;
    let table = support::table(&db);
    client
        .batch_execute(&table.render("ALTER TABLE {table} SET (autovacuum_enabled = false)"))
        .await
        .unwrap();
    Some((db, client))
}

/// Loads `n` rows with `status`: pending rows are due, parked ones retry in an hour,
/// delivered ones were delivered about an hour ago, a hundred at each instant (as a
/// drain's completions of one batch share their time).
pub(crate) async fn load(db: &PgTestDb, client: &Client, n: i64, status: i16) {
    let sql = support::table(db).render(
        "INSERT INTO {table} (id, topic, payload, status, created_at, updated_at, \
         next_retry_at, delivered_at, stamp) \
         SELECT gen_random_uuid(), 't', '\\x00'::bytea, $2::smallint, \
                now() - interval '1 hour' + i * interval '1 microsecond', \
                now() - interval '1 hour', \
                CASE WHEN $2::smallint = 4 THEN now() + interval '1 hour' END, \
                CASE WHEN $2::smallint = 1 \
                     THEN now() - interval '1 hour' + (i / 100) * interval '1 microsecond' END, \
                gen_random_uuid() \
         FROM generate_series(1, $1::bigint) AS i",
    );
    client.execute(&sql, &[&n, &status]).await.unwrap();
}

pub(crate) async fn analyze(db: &PgTestDb, client: &Client) {
    let table = support::table(db);
    client
        .batch_execute(&table.render("ANALYZE {table}"))
        .await
        .unwrap();
}

/// Checks the table's statistics are what the case says they are.
pub(crate) async fn assert_stats(db: &PgTestDb, client: &Client, stats: Stats) {
    let reltuples: f32 = client
        .query_one(
            "SELECT reltuples FROM pg_class WHERE oid = $1::text::regclass",
            &[&support::table(db).qualified()],
        )
        .await
        .unwrap()
        .get(0);
    match stats {
        Stats::Never => assert!(reltuples < 0.0, "analyzed ({reltuples} tuples)"),
        Stats::Analyzed => assert!(reltuples >= 0.0, "never analyzed"),
    }
}

/// What one statement read of the outbox table.
#[derive(Debug)]
pub(crate) struct Read {
    pub(crate) seq_scans: i64,
    pub(crate) rows_fetched: i64,
}

/// Runs `sql` in a transaction of its own and returns its rows with what it read of the
/// table, from the counters PostgreSQL keeps for the running transaction.
pub(crate) async fn reading(
    db: &PgTestDb,
    client: &mut Client,
    sql: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> (Vec<tokio_postgres::Row>, Read) {
    let qualified = support::table(db).qualified();
    let tx = client.transaction().await.unwrap();
    let counters = "SELECT seq_scan, idx_tup_fetch FROM pg_stat_xact_user_tables \
                    WHERE relid = $1::text::regclass";
    let before = tx.query_one(counters, &[&qualified]).await.unwrap();
    let rows = tx.query(sql, params).await.unwrap();
    let after = tx.query_one(counters, &[&qualified]).await.unwrap();
    tx.commit().await.unwrap();
    let delta = |i: usize| -> i64 {
        after.get::<_, Option<i64>>(i).unwrap_or(0) - before.get::<_, Option<i64>>(i).unwrap_or(0)
    };
    (
        rows,
        Read {
            seq_scans: delta(0),
            rows_fetched: delta(1),
        },
    )
}

/// Buffers (hit + read) and rows of `sql` run under `EXPLAIN (ANALYZE, BUFFERS)` in a
/// transaction that is rolled back (so the statement judged next finds the same table).
pub(crate) async fn explained(
    client: &mut Client,
    sql: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> (i64, usize) {
    let explain = format!("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {sql}");
    let tx = client.transaction().await.unwrap();
    let row = tx.query_one(&explain, params).await.unwrap();
    tx.rollback().await.unwrap();
    let plan: serde_json::Value = row.get(0);
    let top = &plan[0]["Plan"];
    let count = |key: &str| {
        top[key]
            .as_i64()
            .unwrap_or_else(|| panic!("{key} in {plan}"))
    };
    let rows = top["Actual Rows"].as_u64().unwrap();
    (
        count("Shared Hit Blocks") + count("Shared Read Blocks"),
        usize::try_from(rows).unwrap(),
    )
}

/// Buffers and rows of one claim of 100 through the store's function (walking the pending
/// index from its beginning), rolled back.
async fn claim_buffers(db: &PgTestDb, client: &mut Client, retry: bool) -> (i64, usize) {
    let claim = support::table(db).render(
        "SELECT * FROM {schema_prefix}\"{name}_claim\"(NULL, NULL, $2, 'w', 30000000, $1, true, \
         NULL::timestamptz, NULL::uuid, false)",
    );
    explained(client, &claim, &[&retry, &BATCH]).await
}

/// Leases `n` rows at the head of the queue to another worker, as a busy drain leaves
/// them: a claim has to step over them.
async fn lease_head(db: &PgTestDb, client: &Client, n: i64) {
    let sql = support::table(db).render(
        "SELECT count(*) FROM {schema_prefix}\"{name}_claim\"(NULL, NULL, $1, 'other', \
         30000000, false, true, NULL::timestamptz, NULL::uuid, false)",
    );
    let leased: i64 = client.query_one(&sql, &[&n]).await.unwrap().get(0);
    assert_eq!(leased, n);
}

/// Claims, renews and completes one batch of 100, checking each call read no more of the
/// table than its batch (plus the `skipped` leased rows a claim must step over).
async fn check_hot_path(case: &str, db: &PgTestDb, client: &mut Client, skipped: i64) {
    let table = support::table(db);
    // The first claim warms the catalog caches; the second is the one judged.
    claim_buffers(db, client, true).await;
    let (buffers, rows) = claim_buffers(db, client, true).await;
    assert_eq!(rows, 100, "{case}: the batch is filled");
    eprintln!("{case}: a claim of 100 touched {buffers} buffers");
    assert!(
        buffers < BUFFERS,
        "{case}: a claim of 100 touched {buffers} buffers"
    );

    let claim = table.render(
        "SELECT id, claim_owner, claim_token \
         FROM {schema_prefix}\"{name}_claim\"(NULL, NULL, $1, 'w', 30000000, true, true, \
         NULL::timestamptz, NULL::uuid, false)",
    );
    let (rows, read) = reading(db, client, &claim, &[&BATCH]).await;
    assert_eq!(rows.len(), 100, "{case}");
    // The walk fetches each row it takes or steps over once, the write looks it up again.
    let bound = 3 * BATCH + skipped;
    eprintln!("{case}: claim read {read:?}");
    assert!(
        read.seq_scans == 0 && read.rows_fetched <= bound,
        "{case}: a claim of 100 read {read:?} (at most {bound} rows through indexes)"
    );
    let ids: Vec<Uuid> = rows.iter().map(|r| r.get(0)).collect();
    let owners: Vec<String> = rows.iter().map(|r| r.get(1)).collect();
    let tokens: Vec<Uuid> = rows.iter().map(|r| r.get(2)).collect();

    let renew = table.render(
        "SELECT count(*) FILTER (WHERE applied) \
         FROM {schema_prefix}\"{name}_renew\"($1, $2, $3, NULL, 30000000)",
    );
    let (rows, read) = reading(db, client, &renew, &[&ids, &owners, &tokens]).await;
    assert_eq!(rows[0].get::<_, i64>(0), 100, "{case}: every lease renewed");
    eprintln!("{case}: renewal read {read:?}");
    assert!(
        read.seq_scans == 0 && read.rows_fetched <= 3 * BATCH,
        "{case}: renewing 100 leases read {read:?}"
    );

    let complete = table.render(
        "SELECT count(*) FILTER (WHERE applied) \
         FROM {schema_prefix}\"{name}_complete_batch\"($1::uuid[], $2::text[], $3::uuid[], \
            array_fill(1::smallint, ARRAY[cardinality($1::uuid[])]), \
            array_fill(NULL::timestamptz, ARRAY[cardinality($1::uuid[])]), \
            array_fill(1, ARRAY[cardinality($1::uuid[])]), \
            array_fill(NULL::text, ARRAY[cardinality($1::uuid[])]), \
            array_fill(NULL::text, ARRAY[cardinality($1::uuid[])]), \
            array_fill(NULL::timestamptz, ARRAY[cardinality($1::uuid[])]), \
            array_fill(true, ARRAY[cardinality($1::uuid[])]), \
            array_fill(NULL::text, ARRAY[cardinality($1::uuid[])]), \
            array_fill(NULL::timestamptz, ARRAY[cardinality($1::uuid[])]), \
            ARRAY(SELECT gen_random_uuid() FROM unnest($1::uuid[])))",
    );
    let (rows, read) = reading(db, client, &complete, &[&ids, &owners, &tokens]).await;
    assert_eq!(
        rows[0].get::<_, i64>(0),
        100,
        "{case}: every entry delivered"
    );
    eprintln!("{case}: completion read {read:?}");
    assert!(
        read.seq_scans == 0 && read.rows_fetched <= 3 * BATCH,
        "{case}: completing 100 claims read {read:?}"
    );

    // The same completions again: every one refused (the rows are delivered), so the
    // refused rows are read too, at the cost of the batch.
    let (rows, read) = reading(db, client, &complete, &[&ids, &owners, &tokens]).await;
    assert_eq!(
        rows[0].get::<_, i64>(0),
        0,
        "{case}: a completion applied twice"
    );
    eprintln!("{case}: refused completion read {read:?}");
    assert!(
        read.seq_scans == 0 && read.rows_fetched <= 3 * BATCH,
        "{case}: refusing 100 completions read {read:?}"
    );
}

/// One case: a fresh table loaded with `(rows, status)` groups, analyzed or not, with
/// `leased` rows at the head held by another worker.
async fn case(loads: &[(i64, i16)], stats: Stats, leased: i64) {
    let Some((db, mut client)) = table().await else {
        return;
    };
    for &(n, status) in loads {
        load(&db, &client, n, status).await;
    }
    if stats == Stats::Analyzed {
        analyze(&db, &client).await;
    }
    if leased > 0 {
        lease_head(&db, &client, leased).await;
    }
    assert_stats(&db, &client, stats).await;
    let name = format!("{loads:?} (rows, status), {stats:?}, {leased} leased at the head");
    check_hot_path(&name, &db, &mut client, leased).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_pending_never_analyzed() {
    case(&[(10_000, 0)], Stats::Never, 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_pending_analyzed() {
    case(&[(10_000, 0)], Stats::Analyzed, 0).await;
}

/// Where today's planner, left to itself, hashes the batch against the whole table.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_thousand_pending_analyzed() {
    case(&[(200_000, 0)], Stats::Analyzed, 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_a_million_pending_never_analyzed() {
    case(&[(500_000, 0)], Stats::Never, 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_a_million_pending_analyzed() {
    case(&[(500_000, 0)], Stats::Analyzed, 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_pending_behind_a_million_delivered_analyzed() {
    case(&[(1_000_000, 1), (10_000, 0)], Stats::Analyzed, 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parked_retries_are_never_walked_never_analyzed() {
    case(&[(100_000, 4), (10_000, 0)], Stats::Never, 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parked_retries_are_never_walked_analyzed() {
    case(&[(100_000, 4), (10_000, 0)], Stats::Analyzed, 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_leases_at_the_head_analyzed() {
    // Four busy workers' batches at the head of the queue.
    case(&[(10_000, 0)], Stats::Analyzed, 400).await;
}

/// Analyzed while small, then a burst the statistics have not seen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statistics_stale_after_a_burst() {
    let Some((db, mut client)) = table().await else {
        return;
    };
    load(&db, &client, 1_000, 0).await;
    analyze(&db, &client).await;
    load(&db, &client, 200_000, 0).await;
    check_hot_path(
        "1,000 analyzed, then a burst of 200,000",
        &db,
        &mut client,
        0,
    )
    .await;
}

/// The claim's cost does not grow with the backlog either way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claim_cost_does_not_grow_with_the_backlog() {
    for stats in [Stats::Never, Stats::Analyzed] {
        let mut touched = Vec::new();
        for backlog in [10_000i64, 500_000] {
            let Some((db, mut client)) = table().await else {
                return;
            };
            load(&db, &client, backlog, 0).await;
            if stats == Stats::Analyzed {
                analyze(&db, &client).await;
            }
            claim_buffers(&db, &mut client, false).await;
            let (buffers, rows) = claim_buffers(&db, &mut client, false).await;
            assert_eq!(rows, 100);
            touched.push(buffers);
        }
        eprintln!("{stats:?}: claim of 100 at 10k and 500k pending: {touched:?} buffers");
        assert!(
            touched[1] < touched[0] * 2,
            "{stats:?}: a claim at 500k pending touched {} buffers, at 10k {}",
            touched[1],
            touched[0]
        );
    }
}

/// The functions the migrations installed carry the settings the plans depend on: the
/// claim's walk and the batch's per-row lookups, and no JIT compilation (on a large
/// analyzed table the server would compile each call's expressions, 20-75 ms a call).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_installed_functions_carry_their_planner_settings() {
    let Some((db, client)) = table().await else {
        return;
    };
    let schema = db.schema.clone();
    for (function, settings) in [
        (
            "outbox_claim",
            &[
                "enable_sort=off",
                "enable_bitmapscan=off",
                "enable_seqscan=off",
                "enable_hashjoin=off",
                "enable_mergejoin=off",
                "jit=off",
            ][..],
        ),
        (
            "outbox_claim_runs",
            &[
                "enable_sort=off",
                "enable_bitmapscan=off",
                "enable_seqscan=off",
                "enable_hashjoin=off",
                "enable_mergejoin=off",
                "jit=off",
            ][..],
        ),
        (
            "outbox_keep_heads",
            &["enable_seqscan=off", "enable_bitmapscan=off", "jit=off"][..],
        ),
        (
            "outbox_complete_batch",
            &[
                "enable_seqscan=off",
                "enable_bitmapscan=off",
                "enable_hashjoin=off",
                "enable_mergejoin=off",
                "jit=off",
            ][..],
        ),
        (
            "outbox_renew",
            &[
                "enable_seqscan=off",
                "enable_bitmapscan=off",
                "enable_hashjoin=off",
                "enable_mergejoin=off",
                "jit=off",
            ][..],
        ),
    ] {
        // Every overload: the claims keep their previous release's form beside the new.
        let rows = client
            .query(
                "SELECT p.proconfig FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace \
                 WHERE n.nspname = $1 AND p.proname = $2",
                &[&schema, &function],
            )
            .await
            .unwrap_or_else(|e| panic!("{function}: {e}"));
        assert!(!rows.is_empty(), "{function} is not installed");
        for row in rows {
            let config: Vec<String> = row.get(0);
            for setting in settings {
                assert!(
                    config.iter().any(|c| c == setting),
                    "{function} lacks {setting}: {config:?}"
                );
            }
        }
    }
}
