//! The cost of per-key order: the same keyed backlog drained unordered (on a table as
//! `outbox migrate` leaves it) and in key order (on one prepared with `migrate --ordered`,
//! its triggers marking heads as the backlog is loaded), two workers, batch 100, for a
//! few key counts (few hot keys to many cold ones). An
//! ordered drain has at most one entry of a key in flight, so with fewer keys than a
//! batch it cannot fill its batches: the figure for 10 keys is that limit, not overhead.

use super::drain::{measure, DrainSpec};
use super::{progress, Ctx};
use crate::load::{load, Rows};
use crate::results::OrderedRow;
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
                // The unordered drain on a table as `outbox migrate` leaves it, the ordered
                // one on a table prepared for key order (`migrate --ordered`): what a
                // host gets either way.
                let rows = Rows::Keyed {
                    count: backlog,
                    keys,
                };
                if ordered {
                    place.location.enable_ordered_claims().await;
                }
                load(&place.location, rows, plan.payload_bytes).await;
                let spec = DrainSpec {
                    ordered,
                    ..DrainSpec::new(
                        place.location.clone(),
                        WORKERS,
                        BATCH,
                        plan.drain_entries,
                        plan.drain_budget,
                    )
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
