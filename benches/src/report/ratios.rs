//! The ratios the report's tables and targets are made of, each from one run's rows.

use super::*;

/// `a ÷ b`, when both are finite and `b` is positive.
pub(super) fn div(a: f64, b: f64) -> Option<f64> {
    (a.is_finite() && b.is_finite() && b > 0.0).then(|| a / b)
}

/// 1 + 2N: the portable store's commands per claim batch of N.
pub(super) fn portable_statements(batch: u32) -> f64 {
    1.0 + 2.0 * f64::from(batch)
}

pub(super) fn claim_rate(r: &Results, key: (Engine, StorePath, u32, u32)) -> Option<f64> {
    let found = r
        .claims
        .iter()
        .find(|c| (c.engine, c.path, c.batch, c.latency_ms) == key);
    found.map(|c| c.claims_per_s)
}

/// Optimized ÷ portable claims/s for one engine, batch and latency.
pub(super) fn claim_ratio(r: &Results, engine: Engine, batch: u32, latency: u32) -> Option<f64> {
    let optimized = claim_rate(r, (engine, StorePath::Optimized, batch, latency))?;
    div(
        optimized,
        claim_rate(r, (engine, StorePath::Portable, batch, latency))?,
    )
}

/// A scale case's drain rate over the same engine's `pending-10k` (clean) case with the
/// same statistics (analyzed cases over the analyzed clean case).
pub(super) fn scale_ratio(r: &Results, engine: Engine, case: &str) -> Option<f64> {
    let find = |name: &str| {
        r.scale
            .iter()
            .find(|s| s.engine == engine && s.case == name)
    };
    let clean = if case.ends_with(ANALYZED) {
        format!("pending-10k{ANALYZED}")
    } else {
        "pending-10k".to_owned()
    };
    div(
        find(case)?.drain.entries_per_s,
        find(&clean)?.drain.entries_per_s,
    )
}

/// An analyzed scale case's drain rate over the same case never analyzed.
pub(super) fn analyzed_ratio(r: &Results, engine: Engine, case: &str) -> Option<f64> {
    let never = case.strip_suffix(ANALYZED)?;
    let find = |name: &str| {
        r.scale
            .iter()
            .find(|s| s.engine == engine && s.case == name)
    };
    div(
        find(case)?.drain.entries_per_s,
        find(never)?.drain.entries_per_s,
    )
}

/// The drain rate of `engine`'s largest pending backlog (never analyzed) over its
/// smallest, with both backlogs.
pub(super) fn backlog_ratio(r: &Results, engine: Engine) -> Option<(f64, u64, u64)> {
    let mut pending: Vec<&ScaleRow> = r
        .scale
        .iter()
        .filter(|s| s.engine == engine && s.case.starts_with("pending-"))
        .filter(|s| !s.case.ends_with(ANALYZED))
        .collect();
    pending.sort_by_key(|s| s.pending);
    let (small, big) = (pending.first()?, pending.last()?);
    let ratio = div(big.drain.entries_per_s, small.drain.entries_per_s)?;
    (big.pending > small.pending).then_some((ratio, big.pending, small.pending))
}

/// The same ratio for the bare statement loop measured beside the drain (SQLite).
pub(super) fn raw_scale_ratio(r: &Results, engine: Engine, case: &str) -> Option<f64> {
    let find = |name: &str| {
        r.scale
            .iter()
            .find(|s| s.engine == engine && s.case == name)
            .and_then(|s| s.raw_rows_per_s)
    };
    div(find(case)?, find("pending-10k")?)
}

/// Optimized ÷ portable drain rate for the portable drain of the same shape.
pub(super) fn drain_ratio(r: &Results, d: &DrainRow) -> Option<f64> {
    let shape = |x: &DrainRow| (x.engine, x.workers, x.batch, x.latency_ms, x.backlog);
    let same = |p: &&DrainRow| p.path == StorePath::Portable && shape(p) == shape(d);
    let portable = r
        .drains
        .iter()
        .find(same)
        .filter(|_| d.path == StorePath::Optimized)?;
    div(d.outcome.entries_per_s, portable.outcome.entries_per_s)
}

pub(super) fn ceiling_ratio(c: &CeilingRow) -> Option<f64> {
    div(c.drain.entries_per_s, c.raw_rows_per_s)
}

/// The server's CPU time per entry under the drain ÷ under the raw loop.
pub(super) fn ceiling_server_cpu_ratio(c: &CeilingRow) -> Option<f64> {
    div(
        c.drain.server_cpu_us_per_entry?,
        c.raw_server_cpu_us_per_entry?,
    )
}

/// `row`'s figure (`of`) over the same engine's figure on the table without history.
pub(super) fn reading_ratio(
    r: &Results,
    row: &ReadingRow,
    of: fn(&ReadingRow) -> f64,
) -> Option<f64> {
    let base = r
        .reading
        .iter()
        .find(|b| b.engine == row.engine && b.delivered == 0 && b.live == row.live)?;
    (row.delivered > 0)
        .then(|| div(of(row), of(base)))
        .flatten()
}

/// The optimized bulk enqueue (1,000 per call) of rows like `c`'s ÷ the engine's bulk
/// loader writing them.
pub(super) fn copy_ratio(r: &Results, c: &CopyRow) -> Option<f64> {
    let key = (c.engine, StorePath::Optimized, 1_000, c.payload_bytes);
    let bulk = r
        .enqueues
        .iter()
        .find(|e| (e.engine, e.path, e.per_call, e.payload_bytes) == key)?;
    div(bulk.entries_per_s, c.entries_per_s)
}
