//! Held snapshot: a transaction left open on another connection keeps every dead row
//! version the drain makes, so each claim steps over more of them in the queue's index.
//! On one table, round after round of fresh pending entries is loaded and drained (two
//! workers, batch 100, no-op emitter) for a fixed time: once with nothing else open, once
//! with a repeatable-read transaction held open from the start. The table is vacuumed
//! after every round besides what autovacuum does, so that both runs are vacuumed at the
//! same points whatever autovacuum's timing, and the only difference between the runs is what the held snapshot keeps from the vacuum.
//! Each run's last rounds are compared with its first. PostgreSQL only: SQLite keeps no
//! old row versions.

use std::time::{Duration, Instant};

use super::drain::{measure, DrainSpec};
use super::{progress, Ctx};
use crate::load::{load, Rows};
use crate::location::Location;
use crate::results::{Engine, HeldRow, StorePath};
use crate::subject::{open, Link, Place};

/// Runs both ways on PostgreSQL, if it can be reached.
pub async fn run(ctx: &mut Ctx) {
    if !ctx.engines.contains(&Engine::Postgres) {
        return;
    }
    for held in [false, true] {
        let Some(place) = Place::create(Engine::Postgres, "outbox").await else {
            return;
        };
        let holder = if held {
            match hold_snapshot(&place.location.url).await {
                Ok(client) => Some(client),
                Err(why) => {
                    ctx.skip(format!("held snapshot: {why}"));
                    return;
                }
            }
        } else {
            None
        };
        let row = rounds(ctx, &place.location, held).await;
        drop(holder);
        drop(place);
        progress(format_args!(
            "held {}: {} rounds, first {:.0}/s, last {:.0}/s, {} dead rows",
            if held { "snapshot" } else { "nothing" },
            row.rounds_per_s.len(),
            row.rounds_per_s.first().copied().unwrap_or_default(),
            row.rounds_per_s.last().copied().unwrap_or_default(),
            row.dead_rows.map_or("?".into(), |n| n.to_string()),
        ));
        ctx.results.held.push(row);
        if let Some(peer) = super::held_peer::rounds(ctx, held).await {
            progress(format_args!(
                "held {} through {}: {} rounds, {} dead rows",
                if held { "snapshot" } else { "nothing" },
                peer.queue.as_deref().unwrap_or_default(),
                peer.rounds_per_s.len(),
                peer.dead_rows.map_or("?".into(), |n| n.to_string()),
            ));
            ctx.results.held.push(peer);
        }
    }
}

/// Loads and drains rounds on `location` until the plan's time is up (two rounds at
/// least), then reads the table's dead rows.
async fn rounds(ctx: &Ctx, location: &Location, held: bool) -> HeldRow {
    let plan = &ctx.plan;
    let started = Instant::now();
    let mut rounds_per_s = Vec::new();
    let mut loaded = 0;
    let vacuum = format!("VACUUM {}", location.table_name().qualified());
    let cleaner = outbox_testkit::postgres::connect(&location.url)
        .await
        .unwrap_or_else(|why| panic!("held snapshot: no connection to vacuum on: {why}"));
    while started.elapsed() < plan.held_duration || rounds_per_s.len() < 2 {
        let rows = Rows::Pending {
            count: plan.held_round,
            after: loaded,
        };
        load(location, rows, plan.payload_bytes).await;
        loaded += plan.held_round;
        let outcome = measure(&DrainSpec::new(
            location.clone(),
            2,
            100,
            plan.held_round,
            Duration::from_secs(900),
        ))
        .await;
        rounds_per_s.push(outcome.entries_per_s);
        cleaner
            .batch_execute(&vacuum)
            .await
            .unwrap_or_else(|e| panic!("held snapshot: {vacuum} failed: {e}"));
    }
    let seconds = started.elapsed().as_secs_f64();
    let subject = open(location, StorePath::Optimized, Link::direct(), 1).await;
    let dead_rows = subject
        .store
        .stats(&outbox_core::StatsRequest::new())
        .await
        .ok()
        .and_then(|s| s.cleanup)
        .map(|c| c.dead_rows);
    HeldRow {
        engine: Engine::Postgres,
        queue: None,
        held,
        seconds,
        round_entries: plan.held_round,
        rounds_per_s,
        dead_rows,
    }
}

/// A connection to `url`'s database with a repeatable-read transaction open on it, its
/// snapshot taken: it holds back the removal of every row version that dies after now
/// until the client is dropped.
async fn hold_snapshot(url: &str) -> Result<tokio_postgres::Client, String> {
    let client = outbox_testkit::postgres::connect(url).await?;
    client
        .batch_execute(
            "SET application_name = 'outbox-bench held snapshot'; \
             BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT 1",
        )
        .await
        .map_err(|e| format!("cannot open the held transaction: {e}"))?;
    Ok(client)
}
