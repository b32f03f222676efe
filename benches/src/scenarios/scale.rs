//! Scale: the optimized drain's rate must not fall as the table fills. Each case loads a
//! never-analyzed table, then two workers (batch 100, no-op emitter) deliver the same
//! number of entries; the rate is compared with the first case, a small clean backlog.

use std::time::Duration;

use super::drain::{measure, millis, DrainSpec};
use super::{progress, Ctx};
use crate::load::{load, Rows};
use crate::plan::size_label;
use crate::results::{ScaleRow, StorePath};
use crate::subject::Place;

/// One scale case: what the table holds besides its pending rows.
struct Case {
    name: String,
    description: String,
    /// Claimable pending rows.
    pending: u64,
    /// Rows loaded before the pending ones, and leases taken after.
    before: Option<Rows>,
    after: Option<Rows>,
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
    });
    cases
}

/// Runs every case on every engine's optimized store.
pub async fn run(ctx: &mut Ctx) {
    let plan = ctx.plan.clone();
    for engine in ctx.engines.clone() {
        for case in cases(ctx) {
            let Some(place) = Place::create(engine, "outbox").await else {
                continue;
            };
            if let Some(rows) = case.before {
                load(&place.location, rows, plan.payload_bytes).await;
            }
            let leased = match case.after {
                Some(Rows::LeaseHead(n)) => n,
                _ => 0,
            };
            let rows = Rows::Pending {
                count: case.pending + leased,
                after: 0,
            };
            load(&place.location, rows, plan.payload_bytes).await;
            if let Some(rows) = case.after {
                load(&place.location, rows, plan.payload_bytes).await;
            }
            let drain = measure(&DrainSpec {
                location: place.location.clone(),
                path: StorePath::Optimized,
                workers: 2,
                batch: 100,
                latency_ms: 0,
                stop_after: plan.scale_entries.min(case.pending),
                budget_ms: millis(Duration::from_secs(900)),
                claim_ahead: None,
                emission: None,
                concurrency: None,
                emitter: None,
            })
            .await;
            progress(format_args!(
                "scale {} {}: {:.0}/s, {:.1} MiB",
                engine.label(),
                case.name,
                drain.entries_per_s,
                drain.peak_rss_mib
            ));
            ctx.results.scale.push(ScaleRow {
                engine,
                case: case.name,
                description: case.description,
                pending: case.pending,
                drain,
            });
        }
    }
}
