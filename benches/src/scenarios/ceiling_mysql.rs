//! The MariaDB side of the ceiling: the store's own statements (its `.sql` files, rendered
//! for the table as the store renders a claim of every slice in no key order) in a tight
//! loop on one sqlx connection, with no code of the outbox crates in between. Each batch
//! is the store's claim transaction (`BEGIN`; the locking read of `claim_pending.sql`; the
//! lease write of `lease_rows.sql`; `COMMIT`), then its batch completion
//! (`complete_batch.sql`) in a transaction of its own, every claim delivered.
//!
//! The store's `claim_next`, which the drain calls, also runs the retry-ready read
//! (`claim_retry.sql`) first in the same transaction: one more statement per batch that
//! this loop leaves out, as the claim of pending rows alone does.

use std::time::Instant;

use chrono::{DateTime, NaiveDateTime, TimeDelta, Utc};
use serde_json::{json, Value};
use sqlx::mysql::MySqlRow;
use sqlx::{Connection as _, MySqlConnection, Row};
use uuid::Uuid;

use crate::location::Location;
use crate::mariadb::render;
use crate::stats::rate;

const BATCH: u32 = 100;
const OWNER: &str = "raw-sql";

/// What one run of the loop did.
#[derive(Debug, Clone)]
pub(super) struct RawRun {
    /// How it ran, for the report.
    pub method: String,
    /// Rows delivered.
    pub delivered: u64,
    /// Rows delivered per second.
    pub rows_per_s: f64,
}

/// The store's statements, rendered for one table.
struct Statements {
    claim: String,
    lease: String,
    complete: String,
}

/// The store's statements for `location`'s table.
fn statements(location: &Location) -> Statements {
    let table = location.table_name();
    // The claim of every slice in no key order: the template's filter lines left out.
    let claim: String = include_str!("../../../outbox-mysql/sql/claim_pending.sql")
        .lines()
        .filter(|line| !matches!(line.trim(), "{slice_filter}" | "{key_order_filter}"))
        .map(|line| format!("{line}\n"))
        .collect();
    Statements {
        claim: render(&table, &claim),
        lease: render(
            &table,
            include_str!("../../../outbox-mysql/sql/lease_rows.sql"),
        ),
        complete: render(
            &table,
            include_str!("../../../outbox-mysql/sql/complete_batch.sql"),
        ),
    }
}

/// A uuid as the batch statements' JSON carries it (32 hex digits).
fn hex(id: Uuid) -> String {
    id.simple().to_string()
}

/// A time as the batch statements' JSON carries it (UTC, microseconds).
fn json_time(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%d %H:%M:%S%.6f").to_string()
}

/// A locked row: its clustered key, id, and attempt count.
struct Locked {
    seq: i64,
    id: Uuid,
    attempts: i64,
}

fn locked(row: &MySqlRow) -> Result<Locked, sqlx::Error> {
    let id: Vec<u8> = row.try_get("id")?;
    Ok(Locked {
        seq: row.try_get("seq")?,
        id: Uuid::from_slice(&id).map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
        attempts: row.try_get("attempt_count")?,
    })
}

/// The loop on one sqlx connection (a session as the store's pool opens it: `READ
/// COMMITTED`), claiming and completing batches of 100 until nothing is left or `limit`
/// rows are delivered (whole batches: it may deliver up to a batch more).
pub(super) async fn sqlx_loop(location: &Location, limit: Option<u64>) -> Result<RawRun, String> {
    let fail = |e: sqlx::Error| format!("the MariaDB ceiling failed: {e}");
    let sql = statements(location);
    let mut conn = MySqlConnection::connect(&location.url)
        .await
        .map_err(fail)?;
    sqlx::raw_sql(include_str!("../../../outbox-mysql/sql/session.sql"))
        .execute(&mut conn)
        .await
        .map_err(fail)?;
    let limit = limit.unwrap_or(u64::MAX);
    let lease = TimeDelta::seconds(30);
    let started = Instant::now();
    let mut delivered = 0u64;
    while delivered < limit {
        sqlx::raw_sql("BEGIN")
            .execute(&mut conn)
            .await
            .map_err(fail)?;
        let rows = sqlx::query(&sql.claim)
            .bind(None::<DateTime<Utc>>)
            .bind(None::<String>)
            .bind(i64::from(BATCH))
            // No bound on the rows examined, as the store passes for claims not in key order.
            .bind(i64::MAX)
            .fetch_all(&mut conn)
            .await
            .map_err(fail)?;
        let Some(first) = rows.first() else {
            sqlx::raw_sql("COMMIT")
                .execute(&mut conn)
                .await
                .map_err(fail)?;
            break;
        };
        let claimed_at: NaiveDateTime = first.try_get("clock_now").map_err(fail)?;
        let claims = rows
            .iter()
            .map(locked)
            .collect::<Result<Vec<_>, _>>()
            .map_err(fail)?;
        drop(rows);
        let tokens: Vec<Uuid> = claims.iter().map(|_| Uuid::new_v4()).collect();
        let leases: Vec<Value> = claims
            .iter()
            .zip(&tokens)
            .map(|(c, token)| json!({"seq": c.seq, "token": hex(*token), "stamp": hex(Uuid::new_v4())}))
            .collect();
        let leased = sqlx::query(&sql.lease)
            .bind(Value::Array(leases).to_string())
            .bind(OWNER)
            .bind(claimed_at)
            .bind(claimed_at + lease)
            .execute(&mut conn)
            .await
            .map_err(fail)?
            .rows_affected();
        if leased != claims.len() as u64 {
            return Err(format!(
                "the MariaDB ceiling leased {leased} of the {} rows it locked",
                claims.len()
            ));
        }
        sqlx::raw_sql("COMMIT")
            .execute(&mut conn)
            .await
            .map_err(fail)?;

        let at = json_time(Utc::now());
        let done: Vec<Value> = claims
            .iter()
            .zip(&tokens)
            .map(|(c, token)| {
                json!({
                    "id": hex(c.id), "owner": OWNER, "token": hex(*token), "status": 1,
                    "attempt_count": c.attempts + 1, "delivered_at": at, "updated_at": at,
                    "stamp": hex(Uuid::new_v4()),
                })
            })
            .collect();
        sqlx::raw_sql("BEGIN")
            .execute(&mut conn)
            .await
            .map_err(fail)?;
        let written = sqlx::query(&sql.complete)
            .bind(Value::Array(done).to_string())
            .execute(&mut conn)
            .await
            .map_err(fail)?
            .rows_affected();
        sqlx::raw_sql("COMMIT")
            .execute(&mut conn)
            .await
            .map_err(fail)?;
        if written != claims.len() as u64 {
            return Err(format!(
                "the MariaDB ceiling completed {written} of the {} rows it claimed",
                claims.len()
            ));
        }
        delivered += written;
    }
    let rows_per_s = rate(delivered, started.elapsed());
    let _ = conn.close().await;
    Ok(RawRun {
        method: "the store's statements on one sqlx connection".to_owned(),
        delivered,
        rows_per_s,
    })
}
