//! The claim's plan on the real server, read with `ANALYZE FORMAT=JSON` (MariaDB runs the
//! statement and reports what each step did): the locking read walks the pending index
//! in claim order, sorts nothing, and reads about one batch of rows, at 10,000 and at
//! 500,000 pending entries behind 100,000 delivered ones, with fresh statistics.

use outbox_core::store_kit::sql::FilterForms;
use outbox_core::{Quotes, TableName};
use outbox_mysql::MySqlStoreConfig;
use serde_json::Value;
use sqlx::MySqlPool;

use crate::common::fresh_store;

const BATCH: i64 = 100;

/// Writes `n` rows of `status` created after every row before them, without keys.
async fn fill(pool: &MySqlPool, n: u32, status: i32, first: u32) {
    fill_keyed(pool, n, status, first, 0).await;
}

/// Writes `n` rows of `status` created after every row before them, round robin over
/// `keys` partition keys (none for 0), in one statement (`plans_fill.sql`).
pub(crate) async fn fill_keyed(pool: &MySqlPool, n: u32, status: i32, first: u32, keys: u32) {
    sqlx::query(include_str!("plans_fill.sql"))
        .bind(first)
        .bind(first)
        .bind(first)
        .bind(keys)
        .bind(keys)
        .bind(status)
        .bind(n)
        .execute(pool)
        .await
        .expect("fill");
}

/// Fresh statistics for the table, as a statistics run after a load leaves them.
pub(crate) async fn analyze(pool: &MySqlPool) {
    sqlx::query("ANALYZE TABLE outbox")
        .fetch_all(pool)
        .await
        .unwrap();
}

/// The claim's locking read of pending rows, as the store renders it.
fn claim_pending() -> String {
    let table = TableName::default();
    FilterForms::render(
        include_str!("../../sql/claim_pending.sql"),
        include_str!("../../sql/slice_filter.sql"),
        include_str!("../../sql/key_order_filter.sql"),
        |t| table.render_in(t, Quotes::BACKTICKS),
    )
    .pick(false, false)
    .to_owned()
}

/// Every table step of a MariaDB `ANALYZE FORMAT=JSON` plan.
fn steps(plan: &Value, out: &mut Vec<Value>) {
    match plan {
        Value::Object(map) => {
            if let Some(table) = map.get("table") {
                out.push(table.clone());
            }
            for v in map.values() {
                steps(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| steps(v, out)),
        _ => {}
    }
}

async fn assert_bounded_walk(pool: &MySqlPool, pending: u32) {
    let mut tx = pool.begin().await.unwrap();
    let analyzed: String = sqlx::query_scalar(&format!("ANALYZE FORMAT=JSON {}", claim_pending()))
        .bind(Option::<chrono::DateTime<chrono::Utc>>::None)
        .bind(Option::<String>::None)
        .bind(BATCH)
        .bind(i64::MAX)
        .fetch_one(&mut *tx)
        .await
        .unwrap();
    tx.rollback().await.unwrap();
    let plan: Value = serde_json::from_str(&analyzed).unwrap();
    let text = plan.to_string();
    assert!(
        !text.contains("filesort"),
        "the claim sorts at {pending}: {plan:#}"
    );
    let mut all = Vec::new();
    steps(&plan, &mut all);
    let outbox = all
        .iter()
        .find(|t| t["table_name"] == "t")
        .unwrap_or_else(|| panic!("no step reads the outbox: {plan:#}"));
    assert_eq!(outbox["key"], "outbox_pending", "at {pending}: {plan:#}");
    // The status-0 part of the index, read as an equality on its first column (ref) or
    // as a range: either way in index order, as the missing filesort shows.
    assert!(
        outbox["access_type"] == "ref" || outbox["access_type"] == "range",
        "at {pending}: {plan:#}"
    );
    let read = outbox["r_rows"].as_f64().unwrap_or(f64::MAX);
    println!("mariadb claim at {pending} pending: read {read} rows for a batch of {BATCH}");
    assert!(
        read <= (BATCH + 1) as f64,
        "the walk read {read} rows at {pending}: {plan:#}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_claim_walks_the_pending_index_and_stops_after_the_batch() {
    let Some((store, _db)) = fresh_store(MySqlStoreConfig::new()).await else {
        return;
    };
    let pool = store.pool();
    fill(pool, 100_000, 1, 0).await;
    fill(pool, 10_000, 0, 100_000).await;
    analyze(pool).await;
    assert_bounded_walk(pool, 10_000).await;
    fill(pool, 490_000, 0, 110_000).await;
    analyze(pool).await;
    assert_bounded_walk(pool, 500_000).await;
}

/// The live stats (`outbox stats`, the metrics sampler, the dashboard) and the by-topic
/// picture read the live ranges of the claim index and never the delivered history
/// between them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_live_stats_read_what_is_live_and_not_the_history() {
    let Some((store, _db)) = fresh_store(MySqlStoreConfig::new()).await else {
        return;
    };
    let pool = store.pool();
    fill(pool, 200_000, 1, 0).await;
    fill(pool, 1_000, 0, 200_000).await;
    fill(pool, 500, 5, 201_000).await;
    analyze(pool).await;
    let sql = TableName::default().render_in(
        &include_str!("../../sql/admin/live_stats.sql").replace("{schema_literal}", "DATABASE()"),
        Quotes::BACKTICKS,
    );
    let analyzed: String = sqlx::query_scalar(&format!("ANALYZE FORMAT=JSON {sql}"))
        .bind(Option::<chrono::DateTime<chrono::Utc>>::None)
        .fetch_one(pool)
        .await
        .unwrap();
    let plan: Value = serde_json::from_str(&analyzed).unwrap();
    let mut all = Vec::new();
    steps(&plan, &mut all);
    let outbox = all
        .iter()
        .find(|t| t["table_name"] == "t")
        .unwrap_or_else(|| panic!("no step reads the outbox: {plan:#}"));
    assert_eq!(outbox["key"], "outbox_pending", "{plan:#}");
    let read = outbox["r_rows"].as_f64().unwrap_or(f64::MAX);
    println!("mariadb live stats behind 200,000 delivered: read {read} rows of 1,500 live");
    assert!(read <= 1_600.0, "the live stats read {read} rows: {plan:#}");
    let stats = outbox_core::OutboxAdmin::live_stats(&store, &outbox_core::StatsRequest::new())
        .await
        .unwrap();
    assert_eq!(stats.count(outbox_core::EmissionStatus::Pending), 1_000);
    assert_eq!(stats.count(outbox_core::EmissionStatus::DeadLettered), 500);
    assert!(stats.delivered_estimated);
    // The by-topic picture reads the same live ranges.
    let sql = TableName::default().render_in(
        include_str!("../../sql/admin/topic_stats.sql"),
        Quotes::BACKTICKS,
    );
    let mut conn = pool.acquire().await.unwrap();
    let before = handler_reads(&mut conn).await;
    let groups = sqlx::query(&sql).fetch_all(&mut *conn).await.unwrap();
    let after = handler_reads(&mut conn).await;
    let read = after.0 - before.0;
    println!("mariadb topic stats behind 200,000 delivered: read {read} rows of 1,500 live");
    assert_eq!(groups.len(), 2, "one topic, two statuses");
    // Each live row read once through the index and once more from the grouping's
    // temporary table: twice the live rows, whatever the history.
    assert!(read <= 3_100, "the topic stats read {read} rows");
    let topics = outbox_core::OutboxAdmin::topic_stats(&store, 10)
        .await
        .unwrap();
    assert_eq!(topics[0].count(outbox_core::EmissionStatus::Pending), 1_000);
    assert_eq!(
        topics[0].count(outbox_core::EmissionStatus::DeadLettered),
        500
    );
}

/// The server's session counters of rows read through handlers and rows sorted.
pub(crate) async fn handler_reads(conn: &mut sqlx::MySqlConnection) -> (i64, i64) {
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SHOW SESSION STATUS WHERE Variable_name LIKE 'Handler_read%' OR Variable_name = 'Sort_rows'",
    )
    .fetch_all(&mut *conn)
    .await
    .unwrap();
    let n = |pick: &dyn Fn(&str) -> bool| -> i64 {
        rows.iter()
            .filter(|(name, _)| pick(name))
            .map(|(_, v)| v.parse::<i64>().unwrap())
            .sum()
    };
    (
        n(&|name| name.starts_with("Handler_read")),
        n(&|name| name == "Sort_rows"),
    )
}

/// One page of `status` after `after`: the ids listed, the rows read through handlers
/// and the rows sorted (the server's session counters around the statement), and the
/// index the plan reads the outbox through.
async fn listed_page(
    pool: &MySqlPool,
    status: outbox_core::EmissionStatus,
    after: Option<uuid::Uuid>,
) -> (Vec<uuid::Uuid>, i64, i64, String) {
    let listings = outbox_core::store_kit::admin::ListStatements::render(
        include_str!("../../sql/admin/list_entries.sql"),
        include_str!("../../sql/admin/list_delivered.sql"),
        |t| TableName::default().render_in(t, Quotes::BACKTICKS),
    );
    let sql = listings.get(status).to_owned();
    fn bound(
        sql: &str,
        after: Option<uuid::Uuid>,
    ) -> sqlx::query::Query<'_, sqlx::MySql, sqlx::mysql::MySqlArguments> {
        sqlx::query(sql)
            .bind(after)
            .bind(after)
            .bind(Option::<String>::None)
            .bind(Option::<String>::None)
            .bind(Option::<String>::None)
            .bind(Option::<String>::None)
            .bind(LIST_PAGE)
    }
    let run = |sql| bound(sql, after);
    let mut conn = pool.acquire().await.unwrap();
    let explain = format!("EXPLAIN {sql}");
    let key = run(&explain)
        .fetch_all(&mut *conn)
        .await
        .unwrap()
        .iter()
        .filter(|r| sqlx::Row::get::<Option<String>, _>(*r, "table").as_deref() == Some("t"))
        .map(|r| sqlx::Row::get::<Option<String>, _>(r, "key").unwrap_or_default())
        .collect::<Vec<_>>()
        .join(",");
    let before = handler_reads(&mut conn).await;
    let rows = run(&sql).fetch_all(&mut *conn).await.unwrap();
    let after_run = handler_reads(&mut conn).await;
    let ids = rows
        .iter()
        .map(|r| {
            let bytes: Vec<u8> = sqlx::Row::get(r, "id");
            uuid::Uuid::from_slice(&bytes).unwrap()
        })
        .collect();
    (ids, after_run.0 - before.0, after_run.1 - before.1, key)
}

const LIST_PAGE: i64 = 40;

/// An operator's listing reads its page through the index that holds its status, from
/// the cursor on, behind 200,000 delivered rows: the first page and the one after it, of
/// every status, delivered included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_listing_reads_its_page_and_not_the_history() {
    let Some((store, _db)) = fresh_store(MySqlStoreConfig::new()).await else {
        return;
    };
    let pool = store.pool();
    fill(pool, 200_000, 1, 0).await;
    for (first, status) in [
        (200_000, 0),
        (201_000, 2),
        (202_000, 3),
        (203_000, 4),
        (204_000, 5),
    ] {
        fill(pool, 200, status, first).await;
    }
    analyze(pool).await;
    for status in outbox_core::EmissionStatus::ALL {
        let index = match status {
            outbox_core::EmissionStatus::Delivered => "outbox_delivered",
            _ => "outbox_pending",
        };
        let (first, read, sorted, key) = listed_page(pool, status, None).await;
        assert_eq!(first.len() as i64, LIST_PAGE, "{status}");
        let (second, read_next, sorted_next, key_next) =
            listed_page(pool, status, first.last().copied()).await;
        assert_eq!(second.len() as i64, LIST_PAGE, "{status}");
        assert!(first.iter().all(|id| !second.contains(id)), "{status}");
        println!("mariadb {status} listing through {key}: read {read} rows, then {read_next}");
        for (read, sorted, key) in [(read, sorted, key), (read_next, sorted_next, key_next)] {
            assert_eq!(key, index, "{status} reads another index");
            assert_eq!(sorted, 0, "{status}: the listing sorts {sorted} rows");
            assert!(
                read <= 2 * LIST_PAGE + 10,
                "{status}: the listing read {read} rows for a page of {LIST_PAGE}"
            );
        }
    }
}
