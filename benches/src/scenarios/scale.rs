//! Scale: the optimized drain's rate must not fall as the table fills. Each case loads a
//! table, then two workers (batch 100, no-op emitter) deliver the same number of entries;
//! the rate is compared with the first case, a small clean backlog. On PostgreSQL every
//! case runs twice: on a table that was never analyzed (its autovacuum off, so it stays
//! so), and on one vacuumed and analyzed after the load (its autovacuum left on), as a busy
//! table is in production; the analyzed cases carry the suffix [`ANALYZED`] and are
//! compared with the analyzed clean backlog. Every load ends with its engine's flush
//! (`crate::load`), so the drain's timed window does not pay for the load's writes; a
//! PostgreSQL case checkpoints once more after its last step. On SQLite and MariaDB
//! every case is also cleared by the store's statements in a bare loop (one connection,
//! batch 100) on an identical table.

use std::time::Duration;

use super::ceiling_mysql;
use super::ceiling_sqlite::rusqlite_loop;
use super::drain::{measure, DrainSpec};
use super::{progress, Ctx};
use crate::load::{load, Rows};
use crate::plan::size_label;
use crate::results::{Engine, ScaleRow};
use crate::subject::Place;

/// The suffix of a case measured on an analyzed table.
pub const ANALYZED: &str = "-analyzed";

/// One scale case: what the table holds besides its pending rows.
#[derive(Clone)]
struct Case {
    name: String,
    description: String,
    /// Claimable pending rows.
    pending: u64,
    /// Rows loaded before the pending ones, and leases taken after.
    before: Option<Rows>,
    after: Option<Rows>,
    /// Analyzed after the load; otherwise never analyzed.
    analyzed: bool,
}

fn cases(ctx: &Ctx) -> Vec<Case> {
    let plan = &ctx.plan;
    let clean = plan.scale_pending[0];
    let mut cases: Vec<Case> = plan
        .scale_pending
        .iter()
        .map(|&n| Case {
            name: format!("pending-{}", size_label(n)),
            description: format!("{n} pending, nothing else"),
            pending: n,
            before: None,
            after: None,
            analyzed: false,
        })
        .collect();
    cases.push(Case {
        name: format!("history-{}", size_label(plan.scale_history)),
        description: format!(
            "{clean} pending behind {} delivered rows",
            plan.scale_history
        ),
        pending: clean,
        before: Some(Rows::Delivered(plan.scale_history)),
        after: None,
        analyzed: false,
    });
    cases.push(Case {
        name: format!("parked-{}", size_label(plan.scale_parked)),
        description: format!(
            "{clean} pending beside {} retryable failures parked an hour ahead",
            plan.scale_parked
        ),
        pending: clean,
        before: Some(Rows::Parked(plan.scale_parked)),
        after: None,
        analyzed: false,
    });
    cases.push(Case {
        name: "leased-head".to_owned(),
        description: format!(
            "{clean} pending behind {} rows leased for an hour by a slow worker",
            plan.scale_leased_head
        ),
        pending: clean,
        before: None,
        after: Some(Rows::LeaseHead(plan.scale_leased_head)),
        analyzed: false,
    });
    cases
}

/// The cases of `engine`: on PostgreSQL each also on an analyzed table.
fn cases_of(ctx: &Ctx, engine: Engine) -> Vec<Case> {
    let never = cases(ctx);
    if engine != Engine::Postgres {
        return never;
    }
    let analyzed = never.iter().map(|c| Case {
        name: format!("{}{ANALYZED}", c.name),
        description: format!("{}, analyzed", c.description),
        analyzed: true,
        ..c.clone()
    });
    let mut all = never.clone();
    all.extend(analyzed);
    all
}

/// What a PostgreSQL case runs on its table before it is measured.
#[derive(Debug, Clone, Copy)]
enum Prepare {
    /// Autovacuum off for this table alone, so it is never analyzed.
    NeverAnalyze,
    /// Vacuumed and analyzed, as autovacuum leaves a table after a bulk load (its vacuum
    /// and analyze are both due then); autovacuum stays on.
    Analyze,
    /// The load's dirty pages written out, so the load's checkpoint does not land in the
    /// drain's timed window (the drain of a case lasts about a second).
    Settle,
}

/// Runs `step` on a PostgreSQL place's table.
async fn prepare(place: &Place, step: Prepare) {
    let client = crate::pg::client(&place.location.url).await;
    let sql = match step {
        Prepare::NeverAnalyze => "ALTER TABLE {table} SET (autovacuum_enabled = false)",
        Prepare::Analyze => "VACUUM (ANALYZE) {table}",
        Prepare::Settle => "CHECKPOINT",
    };
    client
        .batch_execute(&place.location.table_name().render(sql))
        .await
        .unwrap_or_else(|e| panic!("{step:?} the scale table: {e}"));
}

/// A fresh table holding `case`'s rows; `None` when the engine cannot be reached.
async fn filled(engine: Engine, case: &Case, payload_bytes: u32) -> Option<Place> {
    let place = Place::create(engine, "outbox").await?;
    let postgres = engine == Engine::Postgres;
    if postgres && !case.analyzed {
        prepare(&place, Prepare::NeverAnalyze).await;
    }
    if let Some(rows) = case.before {
        load(&place.location, rows, payload_bytes).await;
    }
    let leased = match case.after {
        Some(Rows::LeaseHead(n)) => n,
        _ => 0,
    };
    let rows = Rows::Pending {
        count: case.pending + leased,
        after: 0,
    };
    load(&place.location, rows, payload_bytes).await;
    if postgres && case.analyzed {
        prepare(&place, Prepare::Analyze).await;
    }
    if let Some(rows) = case.after {
        load(&place.location, rows, payload_bytes).await;
    }
    if postgres {
        prepare(&place, Prepare::Settle).await;
    }
    Some(place)
}

/// Runs every case on every engine's optimized store; on SQLite and MariaDB, the store's
/// statements in a bare loop too, on an identical table, so a case's slowdown shows
/// whether it is the engine's or the library's.
pub async fn run(ctx: &mut Ctx) {
    let plan = ctx.plan.clone();
    for engine in ctx.engines.clone() {
        for case in cases_of(ctx, engine) {
            let Some(place) = filled(engine, &case, plan.payload_bytes).await else {
                continue;
            };
            let stop_after = plan.scale_entries.min(case.pending);
            let drain = measure(&DrainSpec::new(
                place.location.clone(),
                2,
                100,
                stop_after,
                Duration::from_secs(900),
            ))
            .await;
            drop(place);
            let raw_rows_per_s = match engine {
                Engine::Postgres => None,
                Engine::Sqlite | Engine::Mysql => raw_loop(ctx, engine, &case, stop_after).await,
            };
            progress(format_args!(
                "scale {} {}: {:.0}/s, {:.1} MiB, raw loop {}",
                engine.label(),
                case.name,
                drain.entries_per_s,
                drain.peak_rss_mib,
                raw_rows_per_s.map_or("—".into(), |r| format!("{r:.0}/s")),
            ));
            ctx.results.scale.push(ScaleRow {
                engine,
                case: case.name,
                description: case.description,
                pending: case.pending,
                drain,
                raw_rows_per_s,
            });
        }
    }
}

/// The store's statements' bare loop on a fresh copy of `case`, over `limit` rows.
async fn raw_loop(ctx: &mut Ctx, engine: Engine, case: &Case, limit: u64) -> Option<f64> {
    let place = filled(engine, case, ctx.plan.payload_bytes).await?;
    let measured = match engine {
        Engine::Sqlite => rusqlite_loop(&place.location, Some(limit))
            .await
            .map(|(_, rate)| rate),
        Engine::Mysql => ceiling_mysql::sqlx_loop(&place.location, Some(limit))
            .await
            .map(|run| run.rows_per_s),
        Engine::Postgres => return None,
    };
    measured.map_err(|why| ctx.skip(why)).ok()
}
