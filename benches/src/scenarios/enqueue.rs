//! Scenario 4: enqueue throughput, one entry per host transaction (the store's
//! in-transaction enqueue, as a service writes its outbox row beside its business rows)
//! and in bulk calls of 1,000; then, on the optimized stores, many small entries in bulk
//! calls of 1,000, as `outbox enqueue --count N --batch 1000` writes them, beside the
//! engine's own bulk loader writing the same rows ([`super::copy`]).

use std::time::Instant;

use outbox_core::NewEntry;

use super::{progress, Ctx, PATHS};
use crate::results::{Engine, EnqueueRow, StorePath};
use crate::stats::rate;
use crate::subject::{open, Link, Place};

const BULK: u32 = 1_000;

/// The command's default payload size.
const SMALL_PAYLOAD: u32 = 64;

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
            let size = plan.payload_bytes;
            push(ctx, (engine, path, size), 1, plan.enqueue_single, started);

            let started = Instant::now();
            let bulk_entries = plan.enqueue_bulk_calls * u64::from(BULK);
            bulk(&subject, &payload, bulk_entries).await;
            push(ctx, (engine, path, size), BULK, bulk_entries, started);

            if path == StorePath::Optimized {
                let small = vec![b'x'; SMALL_PAYLOAD as usize];
                let started = Instant::now();
                bulk(&subject, &small, plan.enqueue_small_entries).await;
                let what = (engine, path, SMALL_PAYLOAD);
                push(ctx, what, BULK, plan.enqueue_small_entries, started);
                if engine == Engine::Postgres {
                    super::copy::postgres(ctx, plan.enqueue_small_entries, SMALL_PAYLOAD).await;
                }
            }
            // A rate is only worth reporting if every entry is really in the table.
            let mut expected = plan.enqueue_single + bulk_entries;
            if path == StorePath::Optimized {
                expected += plan.enqueue_small_entries;
            }
            let stats = subject
                .store
                .stats(&outbox_core::StatsRequest::new())
                .await
                .expect("stats");
            assert_eq!(
                stats.count(outbox_core::EmissionStatus::Pending),
                expected,
                "{} {}: the enqueues did not all land",
                engine.label(),
                path.label()
            );
        }
    }
}

/// Writes `total` entries of `payload` in calls of up to [`BULK`].
async fn bulk(subject: &crate::subject::Subject, payload: &[u8], total: u64) {
    let mut written = 0;
    while written < total {
        let n = (total - written).min(u64::from(BULK));
        let batch = (0..n)
            .map(|_| NewEntry::new("bench", payload.to_vec()))
            .collect();
        subject
            .store
            .enqueue_batch(batch)
            .await
            .expect("bulk enqueue");
        written += n;
    }
}

fn push(
    ctx: &mut Ctx,
    (engine, path, payload_bytes): (crate::results::Engine, StorePath, u32),
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
        payload_bytes,
    };
    progress(format_args!(
        "enqueue {} {} x{per_call} of {entries} ({payload_bytes} B): {:.0}/s",
        engine.label(),
        path.label(),
        row.entries_per_s
    ));
    ctx.results.enqueues.push(row);
}
