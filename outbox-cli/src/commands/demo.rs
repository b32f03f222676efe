//! `outbox demo`: the main job on the embedded default.
//!
//! Orders and their outbox entries are written in the same SQLite transactions; several
//! drain workers deliver the entries, in per-customer order (the partition key), to a
//! JSONL file; the stats and a check of the file follow: every order's event emitted,
//! how often, and each customer's in the order written.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

use chrono::TimeDelta;
use outbox_core::{EmissionStatus, NewEntry, OutboxError, Result, TableName};
use outbox_sqlite::{SqliteClaimStore, SqliteStoreConfig};

use crate::args::DrainArgs;

fn db_err(e: sqlx::Error) -> OutboxError {
    OutboxError::Database {
        message: e.to_string(),
        source: Some(Box::new(e)),
    }
}

fn io_err(what: &str, e: std::io::Error) -> OutboxError {
    OutboxError::invalid("demo directory", format!("{what}: {e}"))
}

pub(crate) async fn run(dir: Option<PathBuf>, orders: u32, workers: u32) -> Result<()> {
    // A directory of our own making is removed at the end; one the user named is kept.
    let temporary = dir.is_none();
    let dir = dir.unwrap_or_else(|| {
        std::env::temp_dir().join(format!("outbox-demo-{}", uuid::Uuid::new_v4().simple()))
    });
    std::fs::create_dir_all(&dir).map_err(|e| io_err("cannot create it", e))?;
    let db = dir.join("outbox-demo.db");
    let jsonl = dir.join("emissions.jsonl");
    for stale in [&db, &jsonl] {
        if stale.exists() {
            std::fs::remove_file(stale).map_err(|e| io_err("cannot clear the previous run", e))?;
        }
    }
    let url = format!("sqlite://{}", db.display());
    if temporary {
        out!(
            "demo database: {} (removed at the end; pass --dir to keep it)",
            db.display()
        );
    } else {
        out!("demo database: {}", db.display());
    }

    let config = SqliteStoreConfig::new().max_connections(workers + 2);
    let pool = SqliteClaimStore::open_pool(&url, &config).await?;
    outbox_sqlite::migrate(&pool, &TableName::default()).await?;
    outbox_sqlite::enable_ordered_claims(&pool, &TableName::default()).await?;
    sqlx::raw_sql("CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT NOT NULL, total_cents INTEGER NOT NULL)")
        .execute(&pool)
        .await
        .map_err(db_err)?;
    let store = SqliteClaimStore::new(pool.clone(), config).await?;

    // The business write and its outbox entry commit together, 100 orders per transaction.
    let started = Instant::now();
    let mut transactions = 0;
    for first in (0..orders).step_by(100) {
        let mut tx = pool.begin_with("BEGIN IMMEDIATE").await.map_err(db_err)?;
        let mut entries = Vec::new();
        for id in first..(first + 100).min(orders) {
            let total = 1000 + (id % 97) * 13;
            sqlx::query("INSERT INTO orders (id, customer, total_cents) VALUES (?1, ?2, ?3)")
                .bind(i64::from(id))
                .bind(format!("customer-{}", id % 17))
                .bind(i64::from(total))
                .execute(&mut *tx)
                .await
                .map_err(db_err)?;
            let event = serde_json::json!({"order_id": id, "total_cents": total});
            entries.push(
                NewEntry::new("orders.created", event.to_string().into_bytes())
                    .partition_key(format!("customer-{}", id % 17))
                    .header("content-type", "application/json"),
            );
        }
        store.writer().enqueue_in(&mut tx, entries).await?;
        tx.commit().await.map_err(db_err)?;
        transactions += 1;
    }
    out!(
        "wrote {orders} orders and their outbox entries in {transactions} transactions ({:.2} s)",
        started.elapsed().as_secs_f64()
    );

    let store = crate::backend::observed(store);
    let args = DrainArgs {
        owner: Some("demo".into()),
        workers,
        batch: 50,
        lease: TimeDelta::seconds(30),
        concurrency: 8,
        batches_ahead: 2,
        emitter: format!("jsonl:{}", jsonl.display()),
        emit_delay: None,
        metrics_addr: None,
        stats_interval: TimeDelta::seconds(5),
        max_attempts: 5,
        max_age: TimeDelta::days(7),
        emit_timeout: TimeDelta::seconds(60),
        shutdown_grace: TimeDelta::seconds(30),
        // Each customer's events in the order they were written, across every worker.
        ordered: true,
        dead_letter_failing_heads: false,
        key_run: outbox_core::drain::DEFAULT_KEY_RUN,
        slice: None,
        until_empty: true,
        route_down_limit: None,
        schema_check_interval: TimeDelta::seconds(30),
        fail_on_dead_letters: false,
        json: false,
    };
    let emitter = crate::emitters::parse(&args.emitter).await?;
    let started = Instant::now();
    let summary = crate::commands::drain::drain(store.clone(), emitter, &args).await?;
    out!("drained with {workers} workers into {}", jsonl.display());
    let stats = store.stats(&outbox_core::StatsRequest::new()).await?;
    let report = crate::commands::drain::Report {
        summary: &summary,
        elapsed_secs: started.elapsed().as_secs_f64(),
        left: &stats,
    };
    report.text(false);
    out_raw!("{}", crate::commands::stats::to_text(&stats));
    let checked = check_emissions(&jsonl, orders, &stats);
    if temporary {
        std::fs::remove_dir_all(&dir).map_err(|e| io_err("cannot remove it", e))?;
    }
    checked
}

/// Reads the JSONL file back: every entry emitted, none twice.
fn check_emissions(
    jsonl: &std::path::Path,
    orders: u32,
    stats: &outbox_core::OutboxStats,
) -> Result<()> {
    let text =
        std::fs::read_to_string(jsonl).map_err(|e| io_err("cannot read the emissions", e))?;
    let mut per_entry: HashMap<String, u32> = HashMap::new();
    let mut owners: HashMap<String, u32> = HashMap::new();
    // The last order id emitted per customer: each customer's must only go up.
    let mut last_order: HashMap<String, u64> = HashMap::new();
    let mut out_of_order = 0;
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).map_err(|e| {
            OutboxError::invalid("emissions file", format!("a line is not JSON: {e}"))
        })?;
        let event: serde_json::Value =
            serde_json::from_str(v["payload"].as_str().unwrap_or_default()).unwrap_or_default();
        let order = event["order_id"].as_u64().unwrap_or_default();
        let customer = v["partition_key"].as_str().unwrap_or_default().to_owned();
        if let Some(before) = last_order.insert(customer, order) {
            if order < before {
                out_of_order += 1;
            }
        }
        *per_entry
            .entry(v["id"].as_str().unwrap_or_default().to_owned())
            .or_default() += 1;
        *owners
            .entry(v["owner"].as_str().unwrap_or_default().to_owned())
            .or_default() += 1;
    }
    let duplicates = per_entry.values().filter(|n| **n > 1).count();
    let mut by_owner: Vec<_> = owners.into_iter().collect();
    by_owner.sort();
    let shares: Vec<String> = by_owner
        .iter()
        .map(|(owner, n)| format!("{owner} {n}"))
        .collect();
    out!("emissions per worker: {}", shares.join(", "));
    let delivered = stats.count(EmissionStatus::Delivered);
    if per_entry.len() != orders as usize
        || delivered != u64::from(orders)
        || duplicates > 0
        || out_of_order > 0
    {
        return Err(OutboxError::invalid(
            "demo",
            format!(
                "expected {orders} distinct emissions all delivered, each customer's in order; saw {} distinct, {delivered} delivered, {duplicates} emitted twice, {out_of_order} out of order",
                per_entry.len()
            ),
        ));
    }
    out!(
        "every one of the {orders} order events was emitted exactly once and recorded delivered, \
         each of the {} customers' in the order written",
        last_order.len()
    );
    Ok(())
}
