//! The drain with and without claiming ahead, on identical fresh backlogs in one run: the
//! measured worth of overlapping the next claims with the current batch's emission and
//! completion, one batch ahead and at the drain's default depth. PostgreSQL at each added
//! latency with one worker, and with two workers; SQLite with one worker (where the
//! default is one batch ahead while emissions are slow or no other writer waits).

use super::drain::{measure, DrainSpec};
use super::{progress, Ctx};
use crate::results::{Engine, OverlapRow};

const BATCH: u32 = 100;

/// Measures every cell three ways: one batch at a time, one batch ahead, the default.
pub async fn run(ctx: &mut Ctx) {
    let plan = ctx.plan.clone();
    for engine in ctx.engines.clone() {
        let mut cells: Vec<(usize, u32)> =
            ctx.latencies(engine).into_iter().map(|l| (1, l)).collect();
        if engine == Engine::Postgres {
            cells.push((2, 0));
        }
        for (workers, latency_ms) in cells {
            let backlog = plan.drain_entries + plan.drain_entries / 5;
            let mut measured = Vec::new();
            for (claim_ahead, depth) in [(false, None), (true, Some(1)), (true, None)] {
                let Some(place) = ctx.loaded(engine, backlog).await else {
                    return;
                };
                let spec = DrainSpec {
                    latency_ms,
                    claim_ahead: Some(claim_ahead),
                    batches_ahead: depth,
                    ..DrainSpec::new(
                        place.location.clone(),
                        workers,
                        BATCH,
                        plan.drain_entries,
                        plan.drain_budget,
                    )
                };
                measured.push(measure(&spec).await);
            }
            let ahead = measured.pop().expect("measured three times");
            let one_ahead = measured.pop().expect("measured three times");
            let one_at_a_time = measured.pop().expect("measured three times");
            progress(format_args!(
                "overlap {} {workers}w +{latency_ms}ms: {:.0}/s one batch at a time, \
                 {:.0}/s one ahead, {:.0}/s the default",
                engine.label(),
                one_at_a_time.entries_per_s,
                one_ahead.entries_per_s,
                ahead.entries_per_s
            ));
            ctx.results.overlap.push(OverlapRow {
                engine,
                workers,
                batch: BATCH,
                latency_ms,
                backlog,
                one_at_a_time,
                one_ahead: Some(one_ahead),
                ahead,
            });
        }
    }
}
