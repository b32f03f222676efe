//! A claim's cost is bounded by its batch, not by the backlog, the history or the parked
//! retries, on tables that were never analyzed (a queue's statistics are stale by nature).
//! Measured as the buffers `EXPLAIN (ANALYZE, BUFFERS)` reports for one claim of 100.

use tokio_postgres::Client;

use crate::support;

/// Buffers one claim of 100 may touch: its index walk, about 100 heap rows locked and
/// rewritten, and their primary-key lookups. An O(backlog) plan touches tens of thousands.
const BOUND: i64 = 2_500;

/// A fresh migrated table that autovacuum will never analyze during the test.
async fn unanalyzed() -> Option<(outbox_testkit::postgres::PgTestDb, Client)> {
    let db = support::migrated_db().await?;
    let client = db.connect().await;
    let table = support::table(&db);
    client
        .batch_execute(&table.render("ALTER TABLE {table} SET (autovacuum_enabled = false)"))
        .await
        .unwrap();
    Some((db, client))
}

/// Loads `n` rows with `status`: pending rows are due, parked ones retry in an hour.
async fn load(db: &outbox_testkit::postgres::PgTestDb, client: &Client, n: i64, status: i16) {
    let sql = support::table(db).render(
        "INSERT INTO {table} (id, topic, payload, status, created_at, updated_at, \
         next_retry_at, stamp) \
         SELECT gen_random_uuid(), 't', '\\x00'::bytea, $2::smallint, \
                now() - interval '1 hour' + i * interval '1 microsecond', \
                now() - interval '1 hour', \
                CASE WHEN $2::smallint = 4 THEN now() + interval '1 hour' END, \
                gen_random_uuid() \
         FROM generate_series(1, $1::bigint) AS i",
    );
    client.execute(&sql, &[&n, &status]).await.unwrap();
}

/// Buffers (hit + read) of one claim of 100 through the store's function, and the rows
/// it claimed; `retry` also walks the retry-ready group first, as the drain's claim does.
async fn claim_buffers(
    db: &outbox_testkit::postgres::PgTestDb,
    client: &Client,
    retry: bool,
) -> (i64, usize) {
    let table = support::table(db);
    let reltuples: f32 = client
        .query_one(
            "SELECT reltuples FROM pg_class WHERE oid = $1::text::regclass",
            &[&table.qualified()],
        )
        .await
        .unwrap()
        .get(0);
    assert!(
        reltuples < 0.0,
        "the table was analyzed ({reltuples} tuples)"
    );
    let explain = table.render(
        "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) \
         SELECT * FROM {schema_prefix}\"{name}_claim\"(NULL, NULL, 100, 'w', 30000000, $1, true)",
    );
    let row = client.query_one(&explain, &[&retry]).await.unwrap();
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claim_cost_does_not_grow_with_the_backlog() {
    let mut touched = Vec::new();
    for backlog in [10_000i64, 500_000] {
        let Some((db, client)) = unanalyzed().await else {
            return;
        };
        load(&db, &client, backlog, 0).await;
        // The first claim warms the catalog caches; the second is the one judged.
        claim_buffers(&db, &client, false).await;
        let (buffers, rows) = claim_buffers(&db, &client, false).await;
        assert_eq!(rows, 100);
        eprintln!("claim of 100 with {backlog} pending, never analyzed: {buffers} buffers");
        assert!(
            buffers < BOUND,
            "{buffers} buffers at a backlog of {backlog}"
        );
        touched.push(buffers);
    }
    assert!(
        touched[1] < touched[0] * 2,
        "a claim at 500k pending touched {} buffers, at 10k {}",
        touched[1],
        touched[0]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parked_retries_are_never_walked() {
    let Some((db, client)) = unanalyzed().await else {
        return;
    };
    load(&db, &client, 100_000, 4).await;
    load(&db, &client, 10_000, 0).await;
    claim_buffers(&db, &client, true).await;
    let (buffers, rows) = claim_buffers(&db, &client, true).await;
    assert_eq!(rows, 100, "the pending rows fill the batch");
    eprintln!("claim of 100 beside 100,000 parked retries, never analyzed: {buffers} buffers");
    assert!(
        buffers < BOUND,
        "{buffers} buffers with 100k parked retries"
    );
}
