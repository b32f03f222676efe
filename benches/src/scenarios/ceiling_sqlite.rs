//! The SQLite side of the ceiling: the store's own claim and batch-completion statements in
//! a tight loop on one connection, once through `rusqlite` (SQLite with nothing in between),
//! once through `sqlx` (the pool's driver, for comparison: the store no longer runs these
//! calls on it), and once as the store's own calls with no drain around them, so the gap
//! between the drain and SQLite splits into the store's share and the drain's.

use std::time::Instant;

use sqlx::{Connection as _, Row};

use outbox_core::ClaimRequest;

use super::{delivered, long_lease};
use crate::load::sqlite_file;
use crate::location::Location;
use crate::results::StorePath;
use crate::stats::rate;
use crate::subject::{open, Link};

const BATCH: u32 = 100;

/// The store's statements for `location`'s table: claim, then batch completion. The claim
/// is the form the store runs for a claim of every slice: the template's lines naming the
/// slice hash left out (as `outbox_sqlite`'s statements render it).
fn statements(location: &Location) -> (String, String) {
    let table = location.table_name();
    let claim = outbox_core::store_kit::sql::without_lines_naming(
        include_str!("../../../outbox-sqlite/sql/claim.sql"),
        "{slice_hash}",
    );
    // The completion as the store runs it on a table drained unordered: without the
    // line that clears head flags on tables prepared for per-key order.
    let complete = outbox_core::store_kit::sql::without_lines_naming(
        include_str!("../../../outbox-sqlite/sql/complete_batch.sql"),
        "{moves_heads}",
    );
    (table.render(&claim), table.render(&complete))
}

/// The completion batch for claimed `(id, token, attempt_count)` rows, delivered at `at`.
fn completions(owner: &str, claimed: &[(Vec<u8>, Vec<u8>, i64)], at: i64) -> String {
    let batch: Vec<serde_json::Value> = claimed
        .iter()
        .map(|(id, token, attempts)| {
            serde_json::json!({
                "id": hex(id), "owner": owner, "token": hex(token), "status": 1,
                "next_retry_at": null, "attempt_count": attempts + 1,
                "last_error": null, "dead_letter_reason": null, "delivered_at": at,
                "provider_message_id": null, "updated_at": at,
                "stamp": hex(uuid::Uuid::new_v4().as_bytes()),
            })
        })
        .collect();
    serde_json::Value::Array(batch).to_string()
}

fn micros() -> i64 {
    chrono::Utc::now().timestamp_micros()
}

/// The loop on one `rusqlite` connection; rows delivered per second.
///
/// Stops after `limit` rows when given (whole batches: it may deliver up to a batch more).
pub(super) async fn rusqlite_loop(
    location: &Location,
    limit: Option<u64>,
) -> Result<(String, f64), String> {
    let statements = statements(location);
    let file = sqlite_file(&location.url).to_owned();
    tokio::task::spawn_blocking(move || -> rusqlite::Result<(String, f64)> {
        let mut conn = rusqlite::Connection::open(file)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        // The store's connection settings (`SqliteStoreConfig` defaults).
        conn.pragma_update(None, "cache_size", -16_384)?;
        conn.pragma_update(None, "mmap_size", 268_435_456)?;
        Ok((
            "the store's statements on one rusqlite connection".to_owned(),
            direct_loop(&mut conn, &statements, limit.unwrap_or(u64::MAX))?,
        ))
    })
    .await
    .map_err(|e| e.to_string())?
    .map_err(|e| format!("the SQLite ceiling failed: {e}"))
}

/// Claims and completes until nothing is left or `limit` rows are delivered; rows
/// delivered per second.
fn direct_loop(
    conn: &mut rusqlite::Connection,
    (claim, complete): &(String, String),
    limit: u64,
) -> rusqlite::Result<f64> {
    let started = Instant::now();
    let mut delivered = 0u64;
    while delivered < limit {
        let now = micros();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let claimed: Vec<(Vec<u8>, Vec<u8>, i64)> = {
            let mut stmt = tx.prepare_cached(claim)?;
            let params = (
                "raw-sql",
                now,
                now + 30_000_000,
                None::<String>,
                BATCH,
                true,
                true,
            );
            let rows = stmt.query_map(params, |r| {
                Ok((r.get("id")?, r.get("claim_token")?, r.get("attempt_count")?))
            })?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        tx.commit()?;
        if claimed.is_empty() {
            break;
        }
        let json = completions("raw-sql", &claimed, micros());
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        {
            let mut stmt = tx.prepare_cached(complete)?;
            let written = stmt.query_map([json], |r| r.get::<_, Vec<u8>>(0))?;
            for row in written {
                row?;
                delivered += 1;
            }
        }
        tx.commit()?;
    }
    Ok(rate(delivered, started.elapsed()))
}

/// One sqlx connection with the store's settings (`SqliteStoreConfig` defaults).
async fn connect(location: &Location) -> Result<sqlx::SqliteConnection, String> {
    let fail = |e: sqlx::Error| format!("the SQLite ceiling on sqlx failed: {e}");
    let mut conn = sqlx::SqliteConnection::connect(&location.url)
        .await
        .map_err(fail)?;
    for pragma in [
        "PRAGMA journal_mode = WAL",
        "PRAGMA synchronous = NORMAL",
        "PRAGMA cache_size = -16384",
        "PRAGMA mmap_size = 268435456",
    ] {
        sqlx::query(pragma).execute(&mut conn).await.map_err(fail)?;
    }
    Ok(conn)
}

/// The same loop on one `sqlx` connection (the store's driver); rows delivered per second.
pub(super) async fn sqlx_loop(location: &Location) -> Result<f64, String> {
    let (claim, complete) = statements(location);
    let mut conn = connect(location).await?;
    let fail = |e: sqlx::Error| format!("the SQLite ceiling on sqlx failed: {e}");
    let started = Instant::now();
    let mut delivered = 0u64;
    loop {
        let now = micros();
        sqlx::query("BEGIN IMMEDIATE")
            .execute(&mut conn)
            .await
            .map_err(fail)?;
        let claimed: Vec<(Vec<u8>, Vec<u8>, i64)> = sqlx::query(&claim)
            .bind("raw-sql")
            .bind(now)
            .bind(now + 30_000_000)
            .bind(None::<String>)
            .bind(i64::from(BATCH))
            .bind(true)
            .bind(true)
            .fetch_all(&mut conn)
            .await
            .map_err(fail)?
            .iter()
            .map(|r| (r.get("id"), r.get("claim_token"), r.get("attempt_count")))
            .collect();
        sqlx::query("COMMIT")
            .execute(&mut conn)
            .await
            .map_err(fail)?;
        if claimed.is_empty() {
            break;
        }
        let json = completions("raw-sql", &claimed, micros());
        sqlx::query("BEGIN IMMEDIATE")
            .execute(&mut conn)
            .await
            .map_err(fail)?;
        let written = sqlx::query_scalar::<_, Vec<u8>>(&complete)
            .bind(json)
            .fetch_all(&mut conn)
            .await
            .map_err(fail)?;
        delivered += written.len() as u64;
        sqlx::query("COMMIT")
            .execute(&mut conn)
            .await
            .map_err(fail)?;
    }
    Ok(rate(delivered, started.elapsed()))
}

/// The store's own calls in the same loop (`claim_next`, then `complete_batch` of every
/// claim as delivered), with no drain around them; rows delivered per second.
pub(super) async fn store_loop(location: &Location) -> f64 {
    let subject = open(location, StorePath::Optimized, Link::direct(), 2).await;
    let request = ClaimRequest::new("raw-store", BATCH, long_lease());
    let started = Instant::now();
    let mut delivered_rows = 0u64;
    loop {
        let claims = subject.store.claim_next(&request).await.expect("claim");
        if claims.is_empty() {
            break;
        }
        let written = subject
            .store
            .complete_batch(delivered(&claims))
            .await
            .expect("complete");
        delivered_rows += written.len() as u64;
    }
    rate(delivered_rows, started.elapsed())
}

/// Lower-case hex, the form the store's JSON batch statement reads with `unhex`.
pub(super) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    out
}
