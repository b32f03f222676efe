//! What every run must show whatever the machine's speed: the smoke run in CI fails on
//! these, while the rate targets are judged in the full report.

use crate::results::{CeilingRow, DrainOutcome, Engine, Results, StorePath};

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
    for x in &results.reading {
        if !x.delivered_estimated && x.delivered_read != x.delivered_exact {
            broken.push(format!(
                "reading {} behind {} delivered: the live stats counted {} delivered, not an \
                 estimate, and the full count {}",
                x.engine.label(),
                x.delivered,
                x.delivered_read,
                x.delivered_exact
            ));
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
    let ceilings = every_ceiling_round(results).map(|c| &c.drain);
    let scale = results.scale.iter().map(|s| &s.drain);
    if ceilings.chain(scale).any(|o| o.delivered == 0) {
        broken.push("a ceiling or scale drain delivered nothing".to_owned());
    }
    cpu(results, &mut broken);
    mariadb(results, &mut broken);
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

/// The parts of the run that did not run, but for engines left out by `--engines`: a
/// part that did not run checked nothing, so a run that must cover every engine (CI's)
/// has not passed with one.
pub fn skipped(results: &Results) -> Vec<String> {
    results
        .environment
        .skipped
        .iter()
        .filter(|why| !why.ends_with(crate::scenarios::NOT_SELECTED))
        .map(|why| format!("skipped: {why}"))
        .collect()
}

/// Every drain says what CPU its process spent per entry; the ceilings, which the report
/// judges on it, also say the server's, on both sides, wherever a server is used (the
/// bench runs beside its servers, whose processes it reads).
fn cpu(r: &Results, broken: &mut Vec<String>) {
    for (name, o) in outcomes(r) {
        if o.delivered > 0 && o.cpu_us_per_entry.is_none() {
            broken.push(format!("{name}: no CPU time per entry"));
        }
    }
    for c in every_ceiling_round(r).filter(|c| c.engine != Engine::Sqlite) {
        let figures = [
            c.raw_cpu_us_per_entry,
            c.raw_server_cpu_us_per_entry,
            c.drain.server_cpu_us_per_entry,
        ];
        if figures.iter().any(Option::is_none) {
            broken.push(format!(
                "ceiling {}: CPU per entry missing (raw client, raw server, drain server: \
                 {figures:?}); is the server on another machine?",
                c.engine.label()
            ));
        }
    }
}

/// Every round of every ceiling cell: the one the report shows, then the others.
fn every_ceiling_round(r: &Results) -> impl Iterator<Item = &CeilingRow> {
    r.ceilings
        .iter()
        .flat_map(|c| std::iter::once(c).chain(&c.other_rounds))
}

/// Every drain's outcome, named.
fn outcomes(r: &Results) -> Vec<(String, &DrainOutcome)> {
    let mut all = Vec::new();
    for d in &r.drains {
        let name = format!(
            "drain {} {} {}w batch {}",
            d.engine.label(),
            d.path.label(),
            d.workers,
            d.batch
        );
        all.push((name, &d.outcome));
    }
    for c in every_ceiling_round(r) {
        all.push((format!("ceiling drain {}", c.engine.label()), &c.drain));
    }
    for s in &r.scale {
        all.push((format!("scale {} {}", s.engine.label(), s.case), &s.drain));
    }
    for o in &r.overlap {
        let name = format!("overlap {} {}w", o.engine.label(), o.workers);
        all.push((format!("{name} one at a time"), &o.one_at_a_time));
        all.push((format!("{name} ahead"), &o.ahead));
    }
    for s in &r.statements {
        let name = format!("statements PostgreSQL {}w batch {}", s.workers, s.batch);
        all.push((format!("{name} named"), &s.named));
        all.push((format!("{name} unnamed"), &s.unnamed));
        if let Some(pooled) = &s.pooled {
            all.push((format!("{name} unnamed through PgBouncer"), pooled));
        }
    }
    for f in &r.flow {
        let name = format!("flow {} {} {}", f.engine.label(), f.concurrency, f.emission);
        all.push((name, &f.outcome));
    }
    for b in &r.brokers {
        let name = format!("brokers {} {}", b.engine.label(), b.emitter);
        all.push((name, &b.outcome));
    }
    for o in &r.ordered {
        let name = format!("ordered {} {} keys", o.engine.label(), o.keys);
        for outcome in std::iter::once(&o.outcome).chain(&o.other_rounds) {
            all.push((name.clone(), outcome));
        }
    }
    all
}

/// MariaDB's drains are counted in the table afterwards: every delivery the drain counted
/// must be there, once; and its ceiling runs (the raw loop and the drain) must each clear
/// the whole backlog.
fn mariadb(r: &Results, broken: &mut Vec<String>) {
    for (name, o) in outcomes(r) {
        if let Some(rows) = o.table_delivered {
            if rows != o.delivered {
                broken.push(format!(
                    "{name}: the drain counted {} deliveries, the table holds {rows} delivered rows",
                    o.delivered
                ));
            }
        }
    }
    for c in every_ceiling_round(r).filter(|c| c.engine == Engine::Mysql) {
        if c.raw_delivered != Some(c.backlog) {
            broken.push(format!(
                "ceiling MariaDB: the raw loop delivered {:?} of {} rows",
                c.raw_delivered, c.backlog
            ));
        }
        if c.drain.delivered != c.backlog {
            broken.push(format!(
                "ceiling MariaDB: the drain delivered {} of {} rows",
                c.drain.delivered, c.backlog
            ));
        }
    }
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

    #[test]
    fn a_mariadb_drain_must_find_each_delivery_in_the_table() {
        let outcome = |delivered, table_delivered| DrainOutcome {
            delivered,
            table_delivered,
            cpu_us_per_entry: Some(3.0),
            ..DrainOutcome::default()
        };
        let row = |o| crate::results::DrainRow {
            engine: Engine::Mysql,
            path: StorePath::Optimized,
            workers: 1,
            batch: 100,
            latency_ms: 0,
            backlog: 500,
            outcome: o,
        };
        let mut results = Results::default();
        results.drains.push(row(outcome(200, Some(200))));
        results.drains.push(row(outcome(200, None)));
        assert!(broken(&results).is_empty());
        results.drains.push(row(outcome(200, Some(199))));
        assert_eq!(broken(&results).len(), 1);
    }

    #[test]
    fn a_skipped_part_is_named_unless_its_engine_was_left_out() {
        let mut results = Results::default();
        assert!(skipped(&results).is_empty());
        results
            .environment
            .skipped
            .push("the MariaDB ceiling failed: …".into());
        assert_eq!(
            skipped(&results),
            vec!["skipped: the MariaDB ceiling failed: …".to_owned()]
        );
        // An engine left out on purpose is not a failure.
        results.environment.skipped = vec![format!("MariaDB: {}", crate::scenarios::NOT_SELECTED)];
        assert!(skipped(&results).is_empty());
    }

    #[test]
    fn drains_and_server_ceilings_must_say_what_cpu_they_spent() {
        let mut c: crate::results::CeilingRow = serde_json::from_value(serde_json::json!({
            "engine": "postgres", "method": "pgbench", "backlog": 100, "batch": 100,
            "clients": 2, "raw_rows_per_s": 1000.0,
            "raw_cpu_us_per_entry": 10.0, "raw_server_cpu_us_per_entry": 30.0,
            "drain": {"delivered": 100, "seconds": 1.0, "entries_per_s": 100.0,
                      "peak_rss_mib": 1.0, "cpu_us_per_entry": 5.0,
                      "server_cpu_us_per_entry": 35.0}
        }))
        .expect("a ceiling row");
        let mut results = Results::default();
        results.ceilings.push(c.clone());
        assert!(broken(&results).is_empty(), "{:?}", broken(&results));
        c.raw_server_cpu_us_per_entry = None;
        c.drain.cpu_us_per_entry = None;
        results.ceilings.push(c.clone());
        assert_eq!(broken(&results).len(), 2, "{:?}", broken(&results));
        // SQLite has no server to read.
        c.engine = Engine::Sqlite;
        c.drain.cpu_us_per_entry = Some(5.0);
        results.ceilings = vec![c];
        assert!(broken(&results).is_empty(), "{:?}", broken(&results));
    }

    #[test]
    fn every_round_is_judged_not_only_the_one_the_report_shows() {
        let delivered = |n| DrainOutcome {
            delivered: n,
            cpu_us_per_entry: Some(3.0),
            ..DrainOutcome::default()
        };
        let mut c: CeilingRow = serde_json::from_value(serde_json::json!({
            "engine": "sqlite", "method": "loop", "backlog": 100, "batch": 100,
            "clients": 1, "raw_rows_per_s": 1000.0,
            "drain": {"delivered": 100, "seconds": 1.0, "entries_per_s": 100.0,
                      "peak_rss_mib": 1.0, "cpu_us_per_entry": 5.0}
        }))
        .expect("a ceiling row");
        let mut other = c.clone();
        other.drain = delivered(0);
        c.other_rounds.push(other);
        let mut results = Results::default();
        results.ceilings.push(c);
        assert_eq!(broken(&results).len(), 1, "{:?}", broken(&results));

        // An ordered round whose drain spent no CPU it could say (a child that failed to
        // measure itself) is named, though another round is the one kept.
        let mut results = Results::default();
        results.ordered.push(crate::results::OrderedRow {
            engine: Engine::Sqlite,
            keys: 10,
            ordered: true,
            workers: 2,
            batch: 100,
            backlog: 120,
            outcome: delivered(100),
            rounds_per_s: vec![10.0, 20.0],
            other_rounds: vec![DrainOutcome {
                cpu_us_per_entry: None,
                ..delivered(100)
            }],
        });
        assert_eq!(
            broken(&results),
            vec!["ordered SQLite 10 keys: no CPU time per entry".to_owned()]
        );
    }
}
