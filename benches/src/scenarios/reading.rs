//! Reading the outbox: what `outbox stats` costs as history piles up. On each engine two
//! tables hold the same live rows (pending entries, due now); one holds them alone, the
//! other behind a long delivered history. Each is read by the live stats (what the drain's
//! metrics sampler, the dashboard and `outbox stats` take: the live rows counted through
//! their indexes, delivered estimated) and by the full count (`outbox stats --exact`),
//! one call at a time on one connection, after two calls that warm the statements. On
//! PostgreSQL both tables are vacuumed and analyzed after the load, as autovacuum leaves
//! a table after a bulk load on the bench's production-configured server.

use std::time::Instant;

use outbox_core::EmissionStatus;

use super::{progress, Ctx};
use crate::load::{load, Rows};
use crate::results::{Engine, ReadingRow, StorePath};
use crate::subject::{open, Link, Place};

/// Median milliseconds of `calls` calls of `read` (after two warm-up calls), and the last
/// picture it took.
async fn timed<F, Fut>(calls: u32, read: F) -> (f64, outbox_core::OutboxStats)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = outbox_core::Result<outbox_core::OutboxStats>>,
{
    for _ in 0..2 {
        read().await.expect("stats");
    }
    let mut ms = Vec::new();
    let mut last = None;
    for _ in 0..calls {
        let started = Instant::now();
        last = Some(read().await.expect("stats"));
        ms.push(started.elapsed().as_secs_f64() * 1_000.0);
    }
    ms.sort_by(f64::total_cmp);
    (ms[ms.len() / 2], last.expect("at least one call"))
}

/// A table with `live` pending entries behind `delivered` delivered ones; `None` when the
/// engine cannot be reached.
async fn filled(engine: Engine, live: u64, delivered: u64, payload: u32) -> Option<Place> {
    let place = Place::create(engine, "outbox").await?;
    if delivered > 0 {
        load(&place.location, Rows::Delivered(delivered), payload).await;
    }
    let rows = Rows::Pending {
        count: live,
        after: delivered,
    };
    load(&place.location, rows, payload).await;
    if engine == Engine::Postgres {
        let client = crate::pg::client(&place.location.url).await;
        client
            .batch_execute(
                &place
                    .location
                    .table_name()
                    .render("VACUUM (ANALYZE) {table}"),
            )
            .await
            .expect("vacuum the reading table");
    }
    Some(place)
}

/// Runs the scenario on every reachable engine.
pub async fn run(ctx: &mut Ctx) {
    let plan = ctx.plan.clone();
    for engine in ctx.engines.clone() {
        for delivered in [0, plan.reading_history] {
            progress(format_args!(
                "reading {}: {} pending behind {delivered} delivered",
                engine.label(),
                plan.reading_live
            ));
            let Some(place) =
                filled(engine, plan.reading_live, delivered, plan.payload_bytes).await
            else {
                ctx.skip(format!("reading on {}: unreachable", engine.label()));
                continue;
            };
            let subject = open(&place.location, StorePath::Optimized, Link::direct(), 1).await;
            let store = subject.store.clone();
            let now = outbox_core::StatsRequest::new();
            let (live_ms, live) = timed(plan.reading_calls, || store.live_stats(&now)).await;
            let exact_calls = plan.reading_calls.min(5);
            let (exact_ms, exact) = timed(exact_calls, || store.stats(&now)).await;
            assert_eq!(
                live.count(EmissionStatus::Pending),
                exact.count(EmissionStatus::Pending),
                "the live and full counts agree on what is live"
            );
            ctx.results.reading.push(ReadingRow {
                engine,
                live: plan.reading_live,
                delivered,
                live_ms,
                exact_ms,
                delivered_read: live.count(EmissionStatus::Delivered),
                delivered_estimated: live.delivered_estimated,
                delivered_exact: exact.count(EmissionStatus::Delivered),
            });
        }
    }
}
