//! Scenario 5: the raw-SQL ceiling, beside the optimized store's drain on an identical,
//! never-analyzed backlog in the same run, so library overhead is a measured ratio. Each
//! cell runs in rounds (the plan's `ceiling_rounds`), the raw loop and the drain one after
//! the other, which goes first alternating, and keeps the round of median ratio: a single
//! pair measured seconds apart on a shared machine moved the ratio by a tenth.
//!
//! PostgreSQL: `pgbench` runs `sql/postgres/ceiling.pgbench` (the store's claim CTE and a
//! token-checked unnest completion) with as many clients as the drain has workers.
//! SQLite: the store's own claim and batch-completion statements (its `.sql` files) in a
//! tight loop on one `rusqlite` connection, one immediate transaction each, as the store
//! runs them, with no library code in between.
//! MariaDB: the store's claim transaction (locking read, lease write) and batch completion
//! (its `.sql` files) in a tight loop on one sqlx connection, one worker, with no library
//! code in between (`ceiling_mysql.rs`); beside it, the store's own calls in the same
//! loop, and the drain.

use std::time::{Duration, Instant};

use super::ceiling_mysql;
use super::ceiling_sqlite::{rusqlite_loop, sqlx_loop, store_loop};
use super::drain::{measure, DrainSpec};
use super::{progress, Ctx};
use crate::load::{load, Rows};
use crate::location::Location;
use crate::results::{CeilingRow, DrainOutcome, Engine};
use crate::subject::Place;

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
    let rows = backlog_rows(ctx);
    // The loops shown for comparison beside the raw one, once per cell.
    let (driver_rows_per_s, store_rows_per_s) = match engine {
        Engine::Postgres => (None, None),
        Engine::Sqlite => driver_loops(ctx, rows, payload_bytes).await,
        Engine::Mysql => (None, own_calls(engine, rows, payload_bytes).await),
    };
    let mut rounds = Vec::new();
    for round in 0..ctx.plan.ceiling_rounds.max(1) {
        let Some(mut row) = measure_round(ctx, engine, payload_bytes, round % 2 == 1).await else {
            return;
        };
        progress(format_args!(
            "ceiling {} ({payload_bytes} B), round {}: raw {:.0}/s, drain {:.0}/s",
            engine.label(),
            round + 1,
            row.raw_rows_per_s,
            row.drain.entries_per_s
        ));
        row.driver_rows_per_s = driver_rows_per_s;
        row.store_rows_per_s = store_rows_per_s;
        rounds.push(row);
    }
    if let Some(row) = CeilingRow::of_rounds(rounds) {
        ctx.results.ceilings.push(row);
    }
}

/// One round of a ceiling cell: the raw loop and the drain, each on a fresh copy of the
/// backlog, the drain first when `drain_first`; `None` when the engine or the raw loop's
/// tool cannot be run (the skip is recorded).
async fn measure_round(
    ctx: &mut Ctx,
    engine: Engine,
    payload_bytes: u32,
    drain_first: bool,
) -> Option<CeilingRow> {
    let mut drain = None;
    if drain_first {
        drain = Some(drain_once(ctx, engine, payload_bytes).await?);
    }
    let raw = raw_once(ctx, engine, payload_bytes).await?;
    if drain.is_none() {
        drain = Some(drain_once(ctx, engine, payload_bytes).await?);
    }
    Some(CeilingRow {
        drain: drain?,
        ..raw
    })
}

/// The ceiling's backlog: the plan's count of pending rows, each cell's copies alike.
fn backlog_rows(ctx: &Ctx) -> Rows {
    Rows::Pending {
        count: ctx.plan.ceiling_backlog,
        after: 0,
    }
}

/// The drain's workers: PostgreSQL's raw loop runs two clients, the others one.
fn clients(engine: Engine) -> usize {
    match engine {
        Engine::Postgres => 2,
        Engine::Sqlite | Engine::Mysql => 1,
    }
}

/// The raw loop on a fresh backlog, as a ceiling row whose drain is still to be measured.
async fn raw_once(ctx: &mut Ctx, engine: Engine, payload_bytes: u32) -> Option<CeilingRow> {
    let backlog = ctx.plan.ceiling_backlog;
    let clients = clients(engine);
    let raw_place = Place::create(engine, "outbox").await?;
    load(&raw_place.location, backlog_rows(ctx), payload_bytes).await;
    let cpu = RawCpu::start(&raw_place.location).await;
    let raw = match engine {
        Engine::Postgres => pgbench(&raw_place.location, backlog, clients)
            .await
            .map(|(method, rate)| (method, rate, None)),
        Engine::Sqlite => rusqlite_loop(&raw_place.location, None)
            .await
            .map(|(method, rate)| (method, rate, None)),
        Engine::Mysql => ceiling_mysql::sqlx_loop(&raw_place.location, None)
            .await
            .map(|run| (run.method, run.rows_per_s, Some(run.delivered))),
    };
    let raw_rows = raw.as_ref().ok().and_then(|r| r.2).unwrap_or(backlog);
    let (raw_cpu_us_per_entry, raw_server_cpu_us_per_entry) = cpu.per_entry(raw_rows);
    drop(raw_place);
    let (method, raw_rows_per_s, raw_delivered) = raw.map_err(|why| ctx.skip(why)).ok()?;
    Some(CeilingRow {
        engine,
        method,
        backlog,
        batch: BATCH,
        clients,
        raw_rows_per_s,
        driver_rows_per_s: None,
        store_rows_per_s: None,
        raw_delivered,
        raw_cpu_us_per_entry,
        raw_server_cpu_us_per_entry,
        drain: DrainOutcome::default(),
        payload_bytes,
        round_ratios: Vec::new(),
        other_rounds: Vec::new(),
    })
}

/// The optimized store's drain on a fresh copy of the ceiling's backlog.
async fn drain_once(ctx: &Ctx, engine: Engine, payload_bytes: u32) -> Option<DrainOutcome> {
    let backlog = ctx.plan.ceiling_backlog;
    let place = Place::create(engine, "outbox").await?;
    load(&place.location, backlog_rows(ctx), payload_bytes).await;
    Some(
        measure(&DrainSpec::new(
            place.location.clone(),
            clients(engine),
            BATCH,
            backlog,
            Duration::from_secs(1_800),
        ))
        .await,
    )
}

/// The CPU time a raw loop costs: the client's (this process, which runs the SQLite and
/// MariaDB loops, plus its children that ended: `pgbench`) and the server's.
struct RawCpu {
    client: Option<f64>,
    server: Option<crate::cpu::ServerSpan>,
}

impl RawCpu {
    async fn start(location: &Location) -> Self {
        let server = crate::cpu::ServerSpan::start(location).await;
        Self {
            client: crate::cpu::with_children_seconds(),
            server,
        }
    }

    /// Client and server microseconds per row, over `rows` rows.
    fn per_entry(&self, rows: u64) -> (Option<f64>, Option<f64>) {
        let client = crate::cpu::with_children_seconds()
            .zip(self.client)
            .and_then(|(now, then)| crate::cpu::per_entry_us(now - then, rows));
        let server = self
            .server
            .and_then(|s| crate::cpu::per_entry_us(s.seconds()?, rows));
        (client, server)
    }
}

/// The store's own calls in the loop the raw SQL runs, on a fresh copy of the backlog.
async fn own_calls(engine: Engine, rows: Rows, payload_bytes: u32) -> Option<f64> {
    let place = Place::create(engine, "outbox").await?;
    load(&place.location, rows, payload_bytes).await;
    Some(store_loop(&place.location).await)
}

/// The SQLite loops on the store's driver and on the store's own calls, each on a fresh
/// copy of the backlog.
async fn driver_loops(ctx: &mut Ctx, rows: Rows, payload_bytes: u32) -> (Option<f64>, Option<f64>) {
    let Some(place) = Place::create(Engine::Sqlite, "outbox").await else {
        return (None, None);
    };
    load(&place.location, rows, payload_bytes).await;
    let on_sqlx = sqlx_loop(&place.location)
        .await
        .map_err(|why| ctx.skip(why))
        .ok();
    drop(place);
    let Some(place) = Place::create(Engine::Sqlite, "outbox").await else {
        return (on_sqlx, None);
    };
    load(&place.location, rows, payload_bytes).await;
    (on_sqlx, Some(store_loop(&place.location).await))
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
