//! The drain's flow against the emitter's time: one worker, an emitter that takes a few
//! milliseconds per entry (always, or with a long tail), at two concurrencies. With
//! `concurrency` emissions always in flight, the rate is concurrency ÷ mean emission time;
//! the drain should come close, whatever its batch boundaries and its slowest emission.

use super::drain::{measure, DrainSpec, EmissionTime};
use super::{progress, Ctx};
use crate::results::FlowRow;

/// Concurrency and batch size of each cell.
const CELLS: [(usize, u32); 2] = [(8, 50), (32, 100)];

/// The emission times: constant, and one in a hundred forty times slower.
fn times() -> [EmissionTime; 2] {
    [
        EmissionTime::constant(5),
        EmissionTime {
            typical_ms: 5,
            tail_ms: 200,
            tail_every: 100,
        },
    ]
}

/// Measures every cell on every engine, on a fresh backlog each.
pub async fn run(ctx: &mut Ctx) {
    let plan = ctx.plan.clone();
    for engine in ctx.engines.clone() {
        for (concurrency, batch) in CELLS {
            for time in times() {
                let backlog = plan.flow_entries + plan.flow_entries / 5;
                let Some(place) = ctx.loaded(engine, backlog).await else {
                    return;
                };
                let spec = DrainSpec {
                    emission: Some(time),
                    concurrency: Some(concurrency),
                    ..DrainSpec::new(
                        place.location.clone(),
                        1,
                        batch,
                        plan.flow_entries,
                        plan.flow_budget,
                    )
                };
                let outcome = measure(&spec).await;
                // Concurrency emissions in flight at all times, each taking the mean time.
                #[allow(clippy::cast_precision_loss)] // A concurrency of a few dozen.
                let ideal_per_s = concurrency as f64 * 1_000.0 / time.mean_ms();
                progress(format_args!(
                    "flow {} concurrency {concurrency} batch {batch}, emission {}: {:.0}/s of {:.0}/s",
                    engine.label(),
                    time.label(),
                    outcome.entries_per_s,
                    ideal_per_s
                ));
                ctx.results.flow.push(FlowRow {
                    engine,
                    concurrency,
                    batch,
                    emission: time.label(),
                    mean_emission_ms: time.mean_ms(),
                    ideal_per_s,
                    backlog,
                    outcome,
                });
            }
        }
    }
}
