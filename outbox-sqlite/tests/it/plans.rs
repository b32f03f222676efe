//! The plans SQLite chooses for the store's batch statements, read with
//! `EXPLAIN QUERY PLAN` on the real file: a claim walks each partial index in claim order
//! (the retry walk bounded above by the claim time) and sorts nothing; a batch completion
//! walks its JSON array and reaches each row through its id's unique index; a claim in key
//! order walks the index of heads and checks a key's leases with one seek, and the head
//! triggers find a key's head with one seek. Checked on a fresh table and
//! again after `ANALYZE` over 1M-scale history and parked retries.

use outbox_core::TableName;
use outbox_sqlite::SqliteStoreConfig;

use crate::support::fresh_ordered_store;

/// `sql` as the store renders it for claims and finds of every slice: the table's name,
/// and no slice filter (the form nearly every claim runs).
fn render(sql: &str) -> String {
    TableName::default().render(&outbox_core::store_kit::sql::without_lines_naming(
        sql,
        "{slice_hash}",
    ))
}

async fn plan(pool: &sqlx::SqlitePool, sql: &str, binds: usize) -> Vec<String> {
    let explain = format!("EXPLAIN QUERY PLAN {sql}");
    let mut query = sqlx::query_as::<_, (i64, i64, i64, String)>(&explain);
    for _ in 0..binds {
        query = query.bind(None::<i64>);
    }
    // EXPLAIN QUERY PLAN plans against the schema the connection last read, without
    // checking it is current: a pooled connection that read it before the ordered
    // indexes were made would plan without them. A read of the schema table first
    // makes the connection load the current schema.
    let mut conn = pool.acquire().await.expect("a connection");
    sqlx::query("SELECT count(*) FROM sqlite_schema")
        .fetch_one(&mut *conn)
        .await
        .expect("read the schema");
    query
        .fetch_all(&mut *conn)
        .await
        .expect("explain")
        .into_iter()
        .map(|(_, _, _, detail)| detail)
        .collect()
}

fn assert_claim_plan(lines: &[String]) {
    let text = lines.join("\n");
    assert!(
        text.contains("USING INDEX outbox_retry_idx (<expr><?)"),
        "the retry walk is not bounded by the claim time:\n{text}"
    );
    assert!(
        text.contains("USING INDEX outbox_pending_idx"),
        "the pending walk does not use its index:\n{text}"
    );
    assert!(!text.contains("TEMP B-TREE"), "the claim sorts:\n{text}");
    assert!(
        text.contains("SEARCH outbox USING INTEGER PRIMARY KEY (rowid=?)"),
        "the claim does not update the rows it chose by rowid:\n{text}"
    );
    for line in lines {
        if line.contains("SCAN outbox") {
            assert!(line.contains("USING INDEX"), "a table scan: {line}\n{text}");
        }
    }
}

fn assert_ordered_claim_plan(lines: &[String]) {
    let text = lines.join("\n");
    assert!(
        text.contains("USING INDEX outbox_ordered_retry_idx (<expr><?)"),
        "the ordered retry walk does not use its bounded index:\n{text}"
    );
    assert!(
        text.contains("USING INDEX outbox_ordered_pending_idx"),
        "the ordered pending walk does not use the index of heads:\n{text}"
    );
    assert!(
        text.contains(
            "USING COVERING INDEX outbox_key_lease_idx (partition_key=? AND claim_expires_at>?)"
        ),
        "the key's lease check is not one seek:\n{text}"
    );
    assert!(
        text.contains("USING INDEX outbox_key_order_idx (partition_key=? AND created_at>?)"),
        "a run's next row is not one seek in the key order:\n{text}"
    );
    assert!(!text.contains("TEMP B-TREE"), "the claim sorts:\n{text}");
    for line in lines {
        if line.contains("SCAN outbox") || line.starts_with("SCAN t") {
            assert!(line.contains("USING INDEX"), "a table scan: {line}\n{text}");
        }
    }
}

/// The statements the head triggers run, with the key bound: each is a seek.
fn assert_head_upkeep_plan(lines: &[String]) {
    let text = lines.join("\n");
    assert!(
        text.contains("USING INDEX outbox_key_order_idx (partition_key=?)"),
        "the key's head is not found in the key index:\n{text}"
    );
    for line in lines {
        assert!(!line.starts_with("SCAN"), "a scan: {line}\n{text}");
    }
}

/// The heads' move after an ordered completion: one seek in the key order index for each
/// key, and each flagged row reached by its rowid; the table is never scanned.
fn assert_head_move_plan(lines: &[String]) {
    let text = lines.join("\n");
    assert!(
        text.contains("USING INDEX outbox_key_order_idx (partition_key=?)"),
        "a key's first row is not found in the key index:\n{text}"
    );
    assert!(
        text.contains("USING INTEGER PRIMARY KEY (rowid=?)"),
        "the new heads are not reached by their rowid:\n{text}"
    );
    assert!(
        !text.contains("SCAN outbox") && !text.contains("SCAN h"),
        "the heads' move scans the table:\n{text}"
    );
}

fn assert_completion_plan(lines: &[String]) {
    let text = lines.join("\n");
    assert!(text.contains("SCAN json_each"), "{text}");
    assert!(
        text.contains("MATERIALIZE batch"),
        "the completion reads its fields from json_each directly:\n{text}"
    );
    assert!(
        text.contains("SEARCH t USING INDEX sqlite_autoindex_outbox_1 (id=?)"),
        "completions do not reach rows by their id's index:\n{text}"
    );
    assert!(
        !text.contains("SCAN t"),
        "a completion scans the table:\n{text}"
    );
}

/// The live stats read each status but delivered through the partial index that holds it
/// alone, and never the table itself: the history is never walked.
fn assert_live_stats_plan(lines: &[String]) {
    let text = lines.join("\n");
    for index in [
        "outbox_pending_idx",
        "outbox_retry_idx",
        "outbox_parked_idx",
    ] {
        assert!(
            text.contains(index),
            "the live stats do not read {index}:\n{text}"
        );
    }
    for line in lines {
        if line.contains(" outbox ") || line.ends_with(" outbox") {
            assert!(
                line.contains("INDEX outbox_"),
                "a read of the whole table: {line}\n{text}"
            );
        }
    }
}

/// An operator's listing of one status walks the index that holds that status alone, in
/// the listing's order (no sort of the status's rows), and reads the table only by rowid.
fn assert_listing_plan(status: outbox_core::EmissionStatus, lines: &[String]) {
    let text = lines.join("\n");
    // The index, and the range the cursor starts (a page after the first starts inside
    // the index, not at its beginning).
    let (index, range) = match status {
        outbox_core::EmissionStatus::Pending => ("outbox_pending_idx", "(created_at>?)"),
        outbox_core::EmissionStatus::Delivered => ("outbox_delivered_idx", "(delivered_at<?)"),
        _ => ("outbox_parked_idx", "(status=? AND created_at>?)"),
    };
    assert!(
        lines.iter().any(|l| l.starts_with("SEARCH t USING INDEX ")
            && l.contains(index)
            && l.contains(range)),
        "{status}: the listing does not walk {index} from the cursor:\n{text}"
    );
    assert!(
        !text.contains("TEMP B-TREE") && !lines.iter().any(|l| l.starts_with("SCAN")),
        "{status}: the listing sorts or scans:\n{text}"
    );
}

/// The by-topic picture reads the pending and parked indexes, never the whole table.
async fn assert_topic_stats_plan(pool: &sqlx::SqlitePool) {
    let sql = render(include_str!("../../sql/admin/topic_stats.sql"));
    let lines = plan(pool, &sql, 0).await;
    let text = lines.join("\n");
    for index in ["outbox_pending_idx", "outbox_parked_idx"] {
        assert!(
            text.contains(index),
            "the topic stats do not read {index}:\n{text}"
        );
    }
    assert!(
        !lines
            .iter()
            .any(|l| l.starts_with("SCAN t") && !l.contains("USING INDEX")),
        "the topic stats scan the table:\n{text}"
    );
}

/// Every listing statement, checked by [`assert_listing_plan`].
async fn assert_listing_plans(pool: &sqlx::SqlitePool) {
    let listings = outbox_core::store_kit::admin::ListStatements::render(
        include_str!("../../sql/admin/list_entries.sql"),
        include_str!("../../sql/admin/list_delivered.sql"),
        render,
    );
    for status in outbox_core::EmissionStatus::ALL {
        assert_listing_plan(status, &plan(pool, listings.get(status), 5).await);
    }
    assert_topic_stats_plan(pool).await;
}

#[tokio::test]
async fn batch_statements_walk_indexes_whatever_the_statistics() {
    let (store, _dir) = fresh_ordered_store(SqliteStoreConfig::new()).await;
    let pool = store.pool();
    let claim = render(include_str!("../../sql/claim.sql"));
    // The completion in both forms: on a table drained unordered, and on one prepared
    // for per-key order (the head flag's line kept), followed there by the heads' move.
    let template = include_str!("../../sql/complete_batch.sql");
    let complete = render(&outbox_core::store_kit::sql::without_lines_naming(
        template,
        "{moves_heads}",
    ));
    let complete_moving_heads = render(&template.replace("{moves_heads}", ""));
    let move_heads = render(include_str!("../../sql/move_heads.sql"));
    let ordered = render(include_str!("../../sql/claim_ordered.sql"));
    let upkeep = render(
        "UPDATE {name} SET is_head = 0 WHERE partition_key = ?1 AND is_head = 1 \
           AND status NOT IN (1, 5) AND rowid IS NOT (SELECT h.rowid FROM {name} AS h WHERE h.partition_key = ?1 \
           AND h.status NOT IN (1, 5) ORDER BY h.created_at, h.id LIMIT 1)",
    );
    assert_claim_plan(&plan(pool, &claim, 9).await);
    assert_ordered_claim_plan(&plan(pool, &ordered, 10).await);
    assert_head_upkeep_plan(&plan(pool, &upkeep, 1).await);
    assert_completion_plan(&plan(pool, &complete, 1).await);
    assert_completion_plan(&plan(pool, &complete_moving_heads, 1).await);
    assert_head_move_plan(&plan(pool, &move_heads, 1).await);
    let live_stats = render(include_str!("../../sql/admin/live_stats.sql"));
    assert_live_stats_plan(&plan(pool, &live_stats, 1).await);
    assert_listing_plans(pool).await;

    // Statistics that make the partial indexes look poor: a large delivered history, many
    // parked retries, few pending rows.
    let now = chrono::Utc::now().timestamp_micros();
    let insert = render(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1) \
         INSERT INTO {table} (id, topic, payload, status, created_at, updated_at, \
         next_retry_at, stamp) \
         SELECT randomblob(16), 't', x'00', ?2, ?3 + i, ?3 + i, ?4, randomblob(16) FROM n",
    );
    let fill = |status: i64, count: i64, retry_at: Option<i64>| {
        sqlx::query(&insert)
            .bind(count)
            .bind(status)
            .bind(now)
            .bind(retry_at)
    };
    fill(1, 50_000, None).execute(pool).await.unwrap();
    fill(4, 20_000, Some(now + 3_600_000_000))
        .execute(pool)
        .await
        .unwrap();
    fill(0, 100, None).execute(pool).await.unwrap();
    // One hot key with a long backlog behind its head.
    sqlx::query(&render(
        "UPDATE {table} SET partition_key = 'hot' WHERE rowid IN \
         (SELECT rowid FROM {table} WHERE status = 1 LIMIT 20000)",
    ))
    .execute(pool)
    .await
    .unwrap();
    sqlx::query("ANALYZE").execute(pool).await.unwrap();
    assert_claim_plan(&plan(pool, &claim, 9).await);
    assert_ordered_claim_plan(&plan(pool, &ordered, 10).await);
    assert_head_upkeep_plan(&plan(pool, &upkeep, 1).await);
    assert_completion_plan(&plan(pool, &complete, 1).await);
    assert_completion_plan(&plan(pool, &complete_moving_heads, 1).await);
    assert_head_move_plan(&plan(pool, &move_heads, 1).await);
    assert_live_stats_plan(&plan(pool, &live_stats, 1).await);
    assert_listing_plans(pool).await;
}
