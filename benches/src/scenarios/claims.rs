//! Scenario 1: one uncontended worker claims batch after batch. Only the claim calls are
//! timed; each batch is completed (untimed) before the next claim, so the queue's head
//! stays clean as it does under a real drain.

use std::time::{Duration, Instant};

use outbox_core::ClaimRequest;

use super::{delivered, long_lease, progress, Cell, Ctx};
use crate::results::ClaimRow;
use crate::stats::{percentile_ms, rate};
use crate::subject::{open, Link};

/// Runs every (engine, path, batch, latency) cell.
pub async fn run(ctx: &mut Ctx) {
    for cell in ctx.cells() {
        let Cell {
            engine,
            path,
            batch,
            latency_ms,
        } = cell;
        let Some(place) = ctx.loaded(engine, ctx.plan.cell_backlog).await else {
            continue;
        };
        let subject = open(&place.location, path, Link::with_latency(latency_ms), 2).await;
        let request = ClaimRequest::new("bench-claimer", batch, long_lease());
        let mut samples: Vec<Duration> = Vec::new();
        let mut claimed = 0u64;
        let mut spent = Duration::ZERO;
        while spent < ctx.plan.cell_budget {
            let started = Instant::now();
            let claims = subject.store.claim_pending(&request).await.expect("claim");
            let took = started.elapsed();
            if claims.is_empty() {
                break;
            }
            spent += took;
            samples.push(took);
            claimed += claims.len() as u64;
            subject
                .store
                .complete_batch(delivered(&claims))
                .await
                .expect("complete");
        }
        let row = ClaimRow {
            engine,
            path,
            batch,
            latency_ms,
            claimed,
            calls: samples.len() as u64,
            seconds: spent.as_secs_f64(),
            claims_per_s: rate(claimed, spent),
            p50_ms: percentile_ms(&mut samples, 0.50),
            p95_ms: percentile_ms(&mut samples, 0.95),
        };
        progress(format_args!(
            "claims {} {} batch {batch} +{latency_ms}ms: {:.0}/s",
            engine.label(),
            path.label(),
            row.claims_per_s
        ));
        ctx.results.claims.push(row);
    }
}
