//! The SQLite and MariaDB stores' targets.

use super::*;

/// The SQLite store's targets: against its raw-statement loop, absolute, and as the
/// table grows.
pub(super) fn sqlite_targets(r: &Results) -> Vec<Target> {
    let lite = Engine::Sqlite;
    let mut t = Vec::new();
    // Rows of older runs carry no size: they ran at the plan's size, not 64 B.
    let sized = |c: &CeilingRow| {
        if c.payload_bytes == 64 {
            "64 B"
        } else {
            "the plan's"
        }
    };
    for size in ["the plan's", "64 B"] {
        let at = |c: &&CeilingRow| c.engine == lite && sized(c) == size;
        let label = if size == "64 B" {
            "64 B payloads (the command's default)".to_owned()
        } else {
            "the plan's payloads".to_owned()
        };
        let v = r.ceilings.iter().filter(at).filter_map(ceiling_ratio);
        let what =
            format!("SQLite drain ÷ raw loop of the same statements, 1 worker, batch 100, {label}");
        t.push(wanted::SQLITE_DRAIN_OVER_RAW.judge(what, v, ratio));
        let v = r.ceilings.iter().filter(at).map(|c| c.drain.entries_per_s);
        let what = format!("SQLite drain entries/s, 1 worker, batch 100, noop, {label}");
        t.push(wanted::SQLITE_DRAIN_RATE.judge(what, v, rate));
    }
    for (case, what) in [
        ("history-1m", "1M delivered history ÷ clean, SQLite drain"),
        ("parked-100k", "100k parked retries ÷ clean, SQLite drain"),
    ] {
        t.push(wanted::SQLITE_SCALE.judge(what.into(), scale_ratio(r, lite, case), ratio));
    }
    let small = |e: &&EnqueueRow| {
        (e.engine, e.path, e.per_call, e.payload_bytes) == (lite, StorePath::Optimized, 1_000, 64)
    };
    let v = r.enqueues.iter().filter(small).map(|e| e.entries_per_s);
    let what = "Bulk enqueue, SQLite, 64 B entries in calls of 1,000, entries/s";
    t.push(wanted::SQLITE_BULK_ENQUEUE.judge(what.into(), v, rate));
    t
}

/// MariaDB's figures: the optimized drain against the portable one, the drain against the
/// raw loop of the store's statements, and the drain as the backlog grows; the claim ratio
/// and the absolute rate are reported. MariaDB is reached direct, with no added latency.
pub(super) fn mariadb_targets(r: &Results) -> Vec<Target> {
    use Rule::Reported;
    let m = Engine::Mysql;
    let mut t = Vec::new();
    let what = "Optimized ÷ portable claims/s, MariaDB, batch 100, direct";
    t.push(Reported.judge(what.into(), claim_ratio(r, m, 100, 0), ratio));
    let one = |d: &&DrainRow| {
        (d.engine, d.path, d.workers, d.batch, d.latency_ms) == (m, StorePath::Optimized, 1, 100, 0)
    };
    let v = r
        .drains
        .iter()
        .filter(one)
        .filter_map(|d| drain_ratio(r, d));
    let what = "Optimized ÷ portable drain entries/s, MariaDB, 1 worker, batch 100, direct";
    t.push(wanted::MARIADB_DRAIN_OPTIMIZED_OVER_PORTABLE.judge(what.into(), v, ratio));
    let ceilings = || r.ceilings.iter().filter(|c| c.engine == m);
    let what = "MariaDB drain ÷ raw loop of the store's statements (sqlx, one connection), \
                1 worker, batch 100";
    t.push(wanted::MARIADB_DRAIN_OVER_RAW.judge(
        what.into(),
        ceilings().filter_map(ceiling_ratio),
        ratio,
    ));
    let what = "MariaDB drain ÷ the store's own calls in the same loop, 1 worker, batch 100";
    let v = ceilings().filter_map(|c| div(c.drain.entries_per_s, c.store_rows_per_s?));
    t.push(Reported.judge(what.into(), v, ratio));
    let what = "MariaDB drain entries/s, 1 worker, batch 100, noop, on the ceiling's backlog";
    t.push(Reported.judge(what.into(), ceilings().map(|c| c.drain.entries_per_s), rate));
    let scale = backlog_ratio(r, m);
    let what = match scale {
        Some((_, big, small)) => format!(
            "MariaDB drain, {} pending ÷ {} pending (2 workers, batch 100)",
            count(big),
            count(small)
        ),
        None => "MariaDB drain, largest pending backlog ÷ smallest (2 workers, batch 100)".into(),
    };
    t.push(wanted::MARIADB_BACKLOG_GROWTH.judge(what, scale.map(|s| s.0), ratio));
    t
}
