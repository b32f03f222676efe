//! Scenario 4: enqueue throughput, one entry per host transaction (the store's
//! in-transaction enqueue, as a service writes its outbox row beside its business rows)
//! and in bulk calls of 1,000.

use std::time::Instant;

use outbox_core::NewEntry;

use super::{progress, Ctx, PATHS};
use crate::results::EnqueueRow;
use crate::stats::rate;
use crate::subject::{open, Link, Place};

const BULK: u32 = 1_000;

/// Runs both modes on every engine and path.
pub async fn run(ctx: &mut Ctx) {
    let plan = ctx.plan.clone();
    let payload = vec![b'x'; plan.payload_bytes as usize];
    for engine in ctx.engines.clone() {
        for path in PATHS {
            let Some(place) = Place::create(engine, "outbox").await else {
                continue;
            };
            let subject = open(&place.location, path, Link::direct(), 2).await;
            let started = Instant::now();
            for _ in 0..plan.enqueue_single {
                let entry = NewEntry::new("bench", payload.clone());
                subject.enqueue_in_host_transaction(entry).await;
            }
            push(ctx, engine, path, 1, plan.enqueue_single, started);

            let started = Instant::now();
            for _ in 0..plan.enqueue_bulk_calls {
                let batch = (0..BULK)
                    .map(|_| NewEntry::new("bench", payload.clone()))
                    .collect();
                subject
                    .store
                    .enqueue_batch(batch)
                    .await
                    .expect("bulk enqueue");
            }
            let bulk_entries = plan.enqueue_bulk_calls * u64::from(BULK);
            push(ctx, engine, path, BULK, bulk_entries, started);
        }
    }
}

fn push(
    ctx: &mut Ctx,
    engine: crate::results::Engine,
    path: crate::results::StorePath,
    per_call: u32,
    entries: u64,
    started: Instant,
) {
    let elapsed = started.elapsed();
    let row = EnqueueRow {
        engine,
        path,
        per_call,
        entries,
        seconds: elapsed.as_secs_f64(),
        entries_per_s: rate(entries, elapsed),
    };
    progress(format_args!(
        "enqueue {} {} x{per_call}: {:.0}/s",
        engine.label(),
        path.label(),
        row.entries_per_s
    ));
    ctx.results.enqueues.push(row);
}
