//! Scenario 5: the raw-SQL ceiling, beside the optimized store's drain on an identical,
//! never-analyzed backlog in the same run, so library overhead is a measured ratio.
//!
//! PostgreSQL: `pgbench` runs `sql/postgres/ceiling.pgbench` (the store's claim CTE and a
//! token-checked unnest completion) with as many clients as the drain has workers.
//! SQLite: the store's own claim and batch-completion statements (its `.sql` files) in a
//! tight loop on one `rusqlite` connection, one immediate transaction each, as the store
//! runs them, with no library code in between.

use std::time::{Duration, Instant};

use super::drain::{measure, millis, DrainSpec};
use super::{progress, Ctx};
use crate::load::{load, sqlite_file, Rows};
use crate::results::{CeilingRow, Engine, StorePath};
use crate::stats::rate;
use crate::subject::{Location, Place};

const BATCH: u32 = 100;

/// Payload size of the command's test entries, measured beside the plan's on SQLite.
const SMALL_PAYLOAD: u32 = 64;

/// Measures both sides on every engine: at the plan's payload size, and on SQLite also at
/// the command's default size.
pub async fn run(ctx: &mut Ctx) {
    for engine in ctx.engines.clone() {
        let mut sizes = vec![ctx.plan.payload_bytes];
        if engine == Engine::Sqlite && ctx.plan.payload_bytes != SMALL_PAYLOAD {
            sizes.push(SMALL_PAYLOAD);
        }
        for payload_bytes in sizes {
            measure_one(ctx, engine, payload_bytes).await;
        }
    }
}

async fn measure_one(ctx: &mut Ctx, engine: Engine, payload_bytes: u32) {
    let clients = match engine {
        Engine::Postgres => 2,
        Engine::Sqlite => 1,
    };
    let backlog = ctx.plan.ceiling_backlog;
    let Some(raw_place) = Place::create(engine, "outbox").await else {
        return;
    };
    let rows = Rows::Pending {
        count: backlog,
        after: 0,
    };
    load(&raw_place.location, rows, payload_bytes).await;
    let raw = match engine {
        Engine::Postgres => pgbench(&raw_place.location, backlog, clients).await,
        Engine::Sqlite => sqlite_loop(&raw_place.location).await,
    };
    drop(raw_place);
    let Some((method, raw_rows_per_s)) = raw.map_err(|why| ctx.skip(why)).ok() else {
        return;
    };
    let Some(place) = Place::create(engine, "outbox").await else {
        return;
    };
    load(&place.location, rows, payload_bytes).await;
    let drain = measure(&DrainSpec {
        location: place.location.clone(),
        path: StorePath::Optimized,
        workers: clients,
        batch: BATCH,
        latency_ms: 0,
        stop_after: backlog,
        budget_ms: millis(Duration::from_secs(1_800)),
        claim_ahead: None,
        emission: None,
        concurrency: None,
        emitter: None,
    })
    .await;
    progress(format_args!(
        "ceiling {} ({payload_bytes} B): raw {raw_rows_per_s:.0}/s, drain {:.0}/s",
        engine.label(),
        drain.entries_per_s
    ));
    ctx.results.ceilings.push(CeilingRow {
        engine,
        method,
        backlog,
        batch: BATCH,
        clients,
        raw_rows_per_s,
        drain,
        payload_bytes,
    });
}

/// Runs the pgbench script until the backlog is cleared; rows delivered per second.
async fn pgbench(
    location: &Location,
    backlog: u64,
    clients: usize,
) -> Result<(String, f64), String> {
    let bin = crate::pg::pgbench().ok_or("the PostgreSQL ceiling needs pgbench (not found)")?;
    let script = location
        .table_name()
        .render(include_str!("../../sql/postgres/ceiling.pgbench"));
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let file = dir.path().join("ceiling.pgbench");
    std::fs::write(&file, script).map_err(|e| e.to_string())?;
    let per_client = backlog.div_ceil(u64::from(BATCH) * clients as u64) + 1;
    let started = Instant::now();
    let out = tokio::process::Command::new(&bin)
        .args(["-n", "-M", "prepared", "-D"])
        .arg(format!("batch={BATCH}"))
        .args(["-c", &clients.to_string(), "-j", &clients.to_string()])
        .args(["-t", &per_client.to_string(), "-f"])
        .arg(&file)
        .arg(&location.url)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
    let wall = started.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        return Err(format!(
            "pgbench failed: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let client = crate::pg::client(&location.url).await;
    let delivered: i64 = client
        .query_one(
            &location
                .table_name()
                .render("SELECT count(*) FROM {table} WHERE status = 1"),
            &[],
        )
        .await
        .map_err(|e| e.to_string())?
        .get(0);
    let delivered = u64::try_from(delivered).unwrap_or(0);
    if delivered != backlog {
        return Err(format!(
            "pgbench delivered {delivered} of {backlog} rows: {stdout}"
        ));
    }
    // pgbench's own rate leaves out connection time; the wall clock is the fallback.
    let seconds = tps(&stdout)
        .map(|tps| (per_client * clients as u64) as f64 / tps)
        .unwrap_or(wall.as_secs_f64());
    Ok((
        format!("pgbench -M prepared, {clients} clients"),
        delivered as f64 / seconds,
    ))
}

/// `tps = N (without initial connection time)` from pgbench's summary.
fn tps(summary: &str) -> Option<f64> {
    summary
        .lines()
        .filter(|l| l.starts_with("tps = ") && l.contains("without initial connection"))
        .find_map(|l| l["tps = ".len()..].split_whitespace().next()?.parse().ok())
}

/// The SQLite tight loop; rows delivered per second.
async fn sqlite_loop(location: &Location) -> Result<(String, f64), String> {
    let table = location.table_name();
    let claim = table.render(include_str!("../../../outbox-sqlite/sql/claim.sql"));
    let complete = table.render(include_str!(
        "../../../outbox-sqlite/sql/complete_batch.sql"
    ));
    let file = sqlite_file(&location.url).to_owned();
    tokio::task::spawn_blocking(move || -> rusqlite::Result<(String, f64)> {
        let mut conn = rusqlite::Connection::open(file)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        // The store's connection settings (`SqliteStoreConfig` defaults).
        conn.pragma_update(None, "cache_size", -16_384)?;
        conn.pragma_update(None, "mmap_size", 268_435_456)?;
        let micros = || chrono::Utc::now().timestamp_micros();
        let started = Instant::now();
        let mut delivered = 0u64;
        loop {
            let now = micros();
            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let claimed: Vec<(Vec<u8>, Vec<u8>, i64)> = {
                let mut stmt = tx.prepare_cached(&claim)?;
                let params = (
                    "raw-sql",
                    now,
                    now + 30_000_000,
                    None::<String>,
                    BATCH,
                    true,
                    true,
                );
                // Every column comes back, as the store needs them to emit.
                let rows = stmt.query_map(params, |r| {
                    Ok((r.get("id")?, r.get("claim_token")?, r.get("attempt_count")?))
                })?;
                rows.collect::<rusqlite::Result<_>>()?
            };
            tx.commit()?;
            if claimed.is_empty() {
                break;
            }
            let at = micros();
            let batch: Vec<serde_json::Value> = claimed
                .iter()
                .map(|(id, token, attempts)| {
                    serde_json::json!({
                        "id": hex(id), "owner": "raw-sql", "token": hex(token), "status": 1,
                        "next_retry_at": null, "attempt_count": attempts + 1,
                        "last_error": null, "dead_letter_reason": null, "delivered_at": at,
                        "provider_message_id": null, "updated_at": at,
                        "stamp": hex(uuid::Uuid::new_v4().as_bytes()),
                    })
                })
                .collect();
            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            {
                let mut stmt = tx.prepare_cached(&complete)?;
                let json = serde_json::Value::Array(batch).to_string();
                let written = stmt.query_map([json], |r| r.get::<_, Vec<u8>>(0))?;
                for row in written {
                    row?;
                    delivered += 1;
                }
            }
            tx.commit()?;
        }
        Ok((
            "the store's statements on one rusqlite connection".to_owned(),
            rate(delivered, started.elapsed()),
        ))
    })
    .await
    .map_err(|e| e.to_string())?
    .map_err(|e| format!("the SQLite ceiling failed: {e}"))
}

/// Lower-case hex, the form the store's JSON batch statement reads with `unhex`.
fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_the_rate_without_connection_time() {
        let out = "number of transactions actually processed: 2000/2000\n\
                   latency average = 9.1 ms\n\
                   initial connection time = 3.2 ms\n\
                   tps = 219.123456 (without initial connection time)\n";
        assert_eq!(super::tps(out), Some(219.123456));
        assert_eq!(super::tps("no summary"), None);
    }
}
