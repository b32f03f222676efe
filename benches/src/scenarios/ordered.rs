//! The cost of per-key order: the same keyed backlog drained unordered (on a table as
//! `outbox migrate` leaves it) and in key order (on one prepared with `migrate --ordered`,
//! its triggers marking heads as the backlog is loaded), two workers, batch 100, for a
//! few key counts (few hot keys to many cold ones). A cell is short (a second or two), so
//! each is run in rounds, the two orders one after the other in each round and which
//! goes first alternating: the report pairs each ordered round with the unordered one
//! beside it and keeps the median.

use super::drain::{measure, DrainSpec};
use super::{progress, Ctx};
use crate::load::{load, Rows};
use crate::plan::Plan;
use crate::results::{median_round, DrainOutcome, Engine, OrderedRow};
use crate::subject::Place;

const WORKERS: usize = 2;
const BATCH: u32 = 100;

/// Measures each key count unordered and ordered, in rounds, on every engine.
pub async fn run(ctx: &mut Ctx) {
    let plan = ctx.plan.clone();
    for engine in ctx.engines.clone() {
        for &keys in &plan.ordered_keys {
            // Every key present, and more than the drain will take.
            let backlog = (plan.drain_entries + plan.drain_entries / 5).max(keys);
            // The outcomes of each round, unordered ([0]) and in key order ([1]).
            let mut rounds: [Vec<DrainOutcome>; 2] = [Vec::new(), Vec::new()];
            for round in 0..plan.ordered_rounds.max(1) {
                let orders = if round % 2 == 0 {
                    [false, true]
                } else {
                    [true, false]
                };
                for ordered in orders {
                    let Some(outcome) = drain_once(engine, keys, backlog, ordered, &plan).await
                    else {
                        return;
                    };
                    progress(format_args!(
                        "ordered {} {keys} keys, {}, round {}: {:.0}/s",
                        engine.label(),
                        if ordered { "in key order" } else { "unordered" },
                        round + 1,
                        outcome.entries_per_s
                    ));
                    rounds[usize::from(ordered)].push(outcome);
                }
            }
            for (ordered, outcomes) in [false, true].into_iter().zip(rounds) {
                let rounds_per_s = outcomes.iter().map(|o| o.entries_per_s).collect();
                let (outcome, other_rounds) =
                    median_round(outcomes, |o: &DrainOutcome| o.entries_per_s).unwrap_or_default();
                ctx.results.ordered.push(OrderedRow {
                    engine,
                    keys,
                    ordered,
                    workers: WORKERS,
                    batch: BATCH,
                    backlog,
                    rounds_per_s,
                    outcome,
                    other_rounds,
                });
            }
        }
    }
}

/// One drain of a fresh keyed backlog of `backlog` entries over `keys` keys; `None` when
/// the engine cannot be reached.
async fn drain_once(
    engine: Engine,
    keys: u64,
    backlog: u64,
    ordered: bool,
    plan: &Plan,
) -> Option<DrainOutcome> {
    let place = Place::create(engine, "outbox").await?;
    // The unordered drain on a table as `outbox migrate` leaves it, the ordered one on a
    // table prepared for key order (`migrate --ordered`): what a host gets either way.
    if ordered {
        place.location.enable_ordered_claims().await;
    }
    let rows = Rows::Keyed {
        count: backlog,
        keys,
    };
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
    Some(measure(&spec).await)
}
