//! The claim's plan on the real server, read with `ANALYZE FORMAT=JSON` (MariaDB runs the
//! statement and reports what each step did): the locking read walks the pending index
//! in claim order, sorts nothing, and reads about one batch of rows, at 10,000 and at
//! 500,000 pending entries behind 100,000 delivered ones, with fresh statistics.

use outbox_core::store_kit::FilterForms;
use outbox_core::{Quotes, TableName};
use outbox_mysql::MySqlStoreConfig;
use serde_json::Value;
use sqlx::MySqlPool;

use crate::common::fresh_store;

const BATCH: i64 = 100;

/// Writes `n` rows of `status` created after every row before them, in one statement
/// (`plans_fill.sql`: its parameters in order are the first number three times, the
/// status, the count).
async fn fill(pool: &MySqlPool, n: u32, status: i32, first: u32) {
    sqlx::query(include_str!("plans_fill.sql"))
        .bind(first)
        .bind(first)
        .bind(first)
        .bind(status)
        .bind(n)
        .execute(pool)
        .await
        .expect("fill");
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
    sqlx::query("ANALYZE TABLE outbox")
        .fetch_all(pool)
        .await
        .unwrap();
    assert_bounded_walk(pool, 10_000).await;
    fill(pool, 490_000, 0, 110_000).await;
    sqlx::query("ANALYZE TABLE outbox")
        .fetch_all(pool)
        .await
        .unwrap();
    assert_bounded_walk(pool, 500_000).await;
}

/// The live stats (`outbox stats`, the metrics sampler, the dashboard) read the live
/// ranges of the claim index and never the delivered history between them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_live_stats_read_what_is_live_and_not_the_history() {
    let Some((store, _db)) = fresh_store(MySqlStoreConfig::new()).await else {
        return;
    };
    let pool = store.pool();
    fill(pool, 200_000, 1, 0).await;
    fill(pool, 1_000, 0, 200_000).await;
    fill(pool, 500, 5, 201_000).await;
    sqlx::query("ANALYZE TABLE outbox")
        .fetch_all(pool)
        .await
        .unwrap();
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
    let stats = outbox_core::OutboxAdmin::live_stats(&store, None)
        .await
        .unwrap();
    assert_eq!(stats.count(outbox_core::EmissionStatus::Pending), 1_000);
    assert_eq!(stats.count(outbox_core::EmissionStatus::DeadLettered), 500);
    assert!(stats.delivered_estimated);
}
