//! The cost of per-key order: the same keyed backlog drained unordered and in key order,
//! two workers, batch 100, for a few key counts (few hot keys to many cold ones). An
//! ordered drain has at most one entry of a key in flight, so with fewer keys than a
//! batch it cannot fill its batches: the figure for 10 keys is that limit, not overhead.

use super::drain::{measure, millis, DrainSpec};
use super::{progress, Ctx};
use crate::load::{load, Rows};
use crate::results::{OrderedRow, StorePath};
use crate::subject::Place;

const WORKERS: usize = 2;
const BATCH: u32 = 100;

/// Measures each key count unordered, then ordered, on every engine.
pub async fn run(ctx: &mut Ctx) {
    let plan = ctx.plan.clone();
    for engine in ctx.engines.clone() {
        for &keys in &plan.ordered_keys {
            // Every key present, and more than the drain will take.
            let backlog = (plan.drain_entries + plan.drain_entries / 5).max(keys);
            for ordered in [false, true] {
                let Some(place) = Place::create(engine, "outbox").await else {
                    return;
                };
                let rows = Rows::Keyed {
                    count: backlog,
                    keys,
                };
                load(&place.location, rows, plan.payload_bytes).await;
                let spec = DrainSpec {
                    location: place.location.clone(),
                    path: StorePath::Optimized,
                    workers: WORKERS,
                    batch: BATCH,
                    latency_ms: 0,
                    stop_after: plan.drain_entries,
                    budget_ms: millis(plan.drain_budget),
                    claim_ahead: None,
                    emission: None,
                    concurrency: None,
                    emitter: None,
                    ordered,
                };
                let outcome = measure(&spec).await;
                progress(format_args!(
                    "ordered {} {keys} keys, {}: {:.0}/s",
                    engine.label(),
                    if ordered { "in key order" } else { "unordered" },
                    outcome.entries_per_s
                ));
                ctx.results.ordered.push(OrderedRow {
                    engine,
                    keys,
                    ordered,
                    workers: WORKERS,
                    batch: BATCH,
                    backlog,
                    outcome,
                });
            }
        }
    }
}
