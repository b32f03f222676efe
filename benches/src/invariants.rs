//! What every run must show whatever the machine's speed: the smoke run in CI fails on
//! these, while the rate targets are judged in the full report.

use crate::results::{Results, StorePath};

/// Every broken invariant, described; empty when all held.
pub fn broken(results: &Results) -> Vec<String> {
    let mut broken = Vec::new();
    for r in &results.races {
        let cell = format!(
            "race {} {} batch {} +{} ms",
            r.engine.label(),
            r.path.label(),
            r.batch,
            r.latency_ms
        );
        if r.duplicate_live_leases > 0 {
            broken.push(format!(
                "{cell}: {} duplicate live leases",
                r.duplicate_live_leases
            ));
        }
        if r.lost_completions > 0 {
            broken.push(format!("{cell}: {} lost completions", r.lost_completions));
        }
        if r.claimed == 0 {
            broken.push(format!("{cell}: claimed nothing"));
        }
    }
    for c in &results.costs {
        let wanted = match c.path {
            StorePath::Optimized => 1.0,
            StorePath::Portable => 1.0 + 2.0 * f64::from(c.batch),
        };
        if c.statements != wanted {
            broken.push(format!(
                "costs {} {} batch {}: {} statements per claim batch, wanted {wanted}",
                c.engine.label(),
                c.path.label(),
                c.batch,
                c.statements
            ));
        }
    }
    // The grid's drains stop at a time budget, which a slow cell (the per-row store behind
    // added latency) may spend on its first batch; these drains run until their goal.
    let ceilings = results.ceilings.iter().map(|c| &c.drain);
    let scale = results.scale.iter().map(|s| &s.drain);
    if ceilings.chain(scale).any(|o| o.delivered == 0) {
        broken.push("a ceiling or scale drain delivered nothing".to_owned());
    }
    for s in &results.soak {
        if s.lost + s.never_emitted + s.undelivered > 0 {
            broken.push(format!(
                "soak: {} lost, {} never emitted, {} undelivered",
                s.lost, s.never_emitted, s.undelivered
            ));
        }
        if s.unexplained_duplicates() > 0 {
            broken.push(format!(
                "soak: {} emissions repeated with no kill to explain them",
                s.unexplained_duplicates()
            ));
        }
        if s.kills == 0 || s.enqueued == 0 {
            broken.push("soak: nothing was killed or nothing enqueued".to_owned());
        }
    }
    broken
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{CostRow, Engine};

    #[test]
    fn a_portable_batch_must_cost_one_plus_two_n() {
        let mut results = Results::default();
        let row = |path, statements| CostRow {
            engine: Engine::Sqlite,
            path,
            batch: 10,
            statements,
            round_trips: None,
            completion_statements: 0.0,
        };
        results.costs.push(row(StorePath::Portable, 21.0));
        results.costs.push(row(StorePath::Optimized, 1.0));
        assert!(broken(&results).is_empty());
        results.costs.push(row(StorePath::Optimized, 2.0));
        assert_eq!(broken(&results).len(), 1);
    }
}
