//! The scenarios, one file each, sharing the run's context.

pub mod brokers;
pub mod ceiling;
mod ceiling_mysql;
mod ceiling_sqlite;
pub mod claims;
pub mod copy;
pub mod costs;
pub mod drain;
pub mod enqueue;
pub mod flow;
pub mod held;
mod held_peer;
pub mod ordered;
pub mod overlap;
pub mod race;
pub mod reading;
pub mod scale;
pub mod soak;
pub mod statements;

use chrono::TimeDelta;
use outbox_core::{Claim, Completion, CompletionRequest, EmissionResult};

use crate::load::{load, Rows};
use crate::plan::Plan;
use crate::results::{Engine, Results, StorePath};
use crate::subject::Place;

/// Both paths, baseline first.
pub const PATHS: [StorePath; 2] = [StorePath::Portable, StorePath::Optimized];

/// A lease long enough that none runs out during a bench.
pub fn long_lease() -> TimeDelta {
    TimeDelta::minutes(10)
}

/// What every scenario reads and adds to.
#[derive(Debug)]
pub struct Ctx {
    /// Sizes and budgets.
    pub plan: Plan,
    /// The engines that can be reached in this run.
    pub engines: Vec<Engine>,
    /// What was measured so far.
    pub results: Results,
}

impl Ctx {
    /// The latencies worth measuring on `engine` (only network engines get added latency).
    pub fn latencies(&self, engine: Engine) -> Vec<u32> {
        if engine.has_network() {
            self.plan.latencies_ms.clone()
        } else {
            vec![0]
        }
    }

    /// Every cell of the grid: each reachable engine's paths, batches and latencies.
    pub fn cells(&self) -> Vec<Cell> {
        let mut cells = Vec::new();
        for &engine in &self.engines {
            for path in PATHS {
                for &batch in &self.plan.batches {
                    for latency_ms in self.latencies(engine) {
                        cells.push(Cell {
                            engine,
                            path,
                            batch,
                            latency_ms,
                        });
                    }
                }
            }
        }
        cells
    }

    /// A fresh table holding `pending` due entries of the plan's payload size; `None` when
    /// the engine cannot be reached (reported).
    pub async fn loaded(&self, engine: Engine, pending: u64) -> Option<Place> {
        let place = Place::create(engine, "outbox").await?;
        let rows = Rows::Pending {
            count: pending,
            after: 0,
        };
        load(&place.location, rows, self.plan.payload_bytes).await;
        Some(place)
    }

    /// Records that something could not run, and says so on stderr.
    pub fn skip(&mut self, what: String) {
        eprintln!("!!!!!!!!!! SKIPPED: {what}");
        self.results.environment.skipped.push(what);
    }

    /// Records that `engine` was left out by `--engines`: skipped, by request.
    pub fn not_selected(&mut self, engine: &str) {
        self.skip(format!("{engine}: {NOT_SELECTED}"));
    }
}

/// How a skip of an engine left out by `--engines` ends: asked for, so not a failure.
pub const NOT_SELECTED: &str = "not selected (--engines)";

/// One cell of the grid.
#[derive(Debug, Clone, Copy)]
pub struct Cell {
    /// Engine.
    pub engine: Engine,
    /// Store.
    pub path: StorePath,
    /// Claim batch size.
    pub batch: u32,
    /// Added round-trip latency, milliseconds.
    pub latency_ms: u32,
}

/// Delivered completions for every claim.
pub fn delivered(claims: &[Claim]) -> Vec<CompletionRequest> {
    claims
        .iter()
        .map(|c| CompletionRequest::new(c.clone(), Completion::Delivered(EmissionResult::new())))
        .collect()
}

/// A progress line on stderr (stdout stays clean for the child protocol).
pub fn progress(what: std::fmt::Arguments<'_>) {
    eprintln!("[bench] {what}");
}
