//! The targets of what every engine shares: per-key order, held snapshots, operator
//! reads, the soak and the drain against a slow emitter.

use super::*;

/// `outbox stats` behind the history ÷ without it: the live stats judged, the full count
/// reported.
pub(super) fn reading_targets(r: &Results) -> Vec<Target> {
    let mut t = Vec::new();
    let engines = [Engine::Postgres, Engine::Mysql, Engine::Sqlite];
    for engine in engines {
        let behind = || {
            r.reading
                .iter()
                .filter(move |x| x.engine == engine && x.delivered > 0)
        };
        let history = behind().map(|x| x.delivered).max().map_or_else(
            || "a delivered history".to_owned(),
            |n| format!("{} delivered", count(n)),
        );
        let what = format!(
            "{}: `outbox stats` (live) behind {history} ÷ without it",
            engine.label()
        );
        let v = behind().filter_map(|x| reading_ratio(r, x, |y| y.live_ms));
        t.push(wanted::LIVE_STATS_BEHIND_HISTORY.judge(what, v, ratio));
        let what = format!(
            "{}: `outbox stats --exact` behind {history} ÷ without it",
            engine.label()
        );
        let v = behind().filter_map(|x| reading_ratio(r, x, |y| y.exact_ms));
        t.push(Rule::Reported.judge(what, v, ratio));
    }
    t
}

/// The drain against a slow emitter, over concurrency ÷ mean emission time.
pub(super) fn flow_targets(r: &Results) -> Vec<Target> {
    let mut t = Vec::new();
    for engine in [Engine::Sqlite, Engine::Postgres] {
        for (concurrency, batch) in [(8, 50), (32, 100)] {
            for tail in [false, true] {
                let at = |f: &&FlowRow| {
                    (f.engine, f.concurrency, f.batch) == (engine, concurrency, batch)
                        && f.emission.contains("1 in") == tail
                };
                let v = r
                    .flow
                    .iter()
                    .filter(at)
                    .filter_map(|f| div(f.outcome.entries_per_s, f.measured_ideal_per_s()?));
                let what = format!(
                    "{} drain ÷ (concurrency ÷ measured mean emission time), 1 worker, \
                     concurrency {concurrency}, batch {batch}, emission 5 ms{}",
                    engine.label(),
                    if tail { ", 1 in 100 at 200 ms" } else { "" }
                );
                t.push(wanted::FLOW_OVER_IDEAL.judge(what, v, ratio));
            }
        }
    }
    t
}

/// The cost of per-key order: the ordered drain ÷ the unordered one on the same keys.
pub(super) fn ordered_targets(r: &Results) -> Vec<Target> {
    let cost = |keys: u64| {
        r.ordered
            .iter()
            .filter(move |o| o.keys == keys)
            .filter_map(|o| o.cost_of_order(&r.ordered))
    };
    let what = |keys: &str| {
        format!("Drain in per-key order ÷ unordered, {keys} keys (2 workers, batch 100)")
    };
    wanted::ORDERED_OVER_UNORDERED
        .iter()
        .map(|&(keys, rule)| rule.judge(what(&count(keys)), cost(keys), ratio))
        .collect()
}

/// The drain while a snapshot is held elsewhere: its last round against its first, and
/// against the same rounds with nothing held; the peer queue's same figures beside them,
/// reported, and how far the outbox stays above the peer.
pub(super) fn held_targets(r: &Results) -> Vec<Target> {
    let mut t = Vec::new();
    // This outbox's targets are listed even when it was not measured.
    let mut queues: Vec<Option<&str>> = r.held.iter().map(|h| h.queue.as_deref()).collect();
    queues.push(None);
    queues.sort_unstable();
    queues.dedup();
    for queue in queues {
        let run = |held: bool| {
            r.held
                .iter()
                .filter(move |h| h.held == held && h.queue.as_deref() == queue)
        };
        let (who, last_over_first, held_over_nothing) = match queue {
            None => (
                "PostgreSQL drain".to_owned(),
                wanted::HELD_LAST_OVER_FIRST,
                wanted::HELD_OVER_NOTHING,
            ),
            Some(peer) => (format!("Peer queue {peer}"), Rule::Reported, Rule::Reported),
        };
        let what = format!(
            "{who} with a transaction held open elsewhere for the whole run: median round \
             of the last tenth ÷ of the first tenth"
        );
        t.push(last_over_first.judge(what, run(true).filter_map(HeldRow::last_over_first), ratio));
        let both = run(true)
            .filter_map(HeldRow::last_tenth)
            .zip(run(false).filter_map(HeldRow::last_tenth));
        let what = format!(
            "{who}'s last tenth of rounds (median), transaction held open elsewhere ÷ nothing \
             held"
        );
        t.push(held_over_nothing.judge(what, both.filter_map(|(h, n)| div(h, n)), ratio));
    }
    let held_last = |peer: bool| {
        r.held
            .iter()
            .filter(move |h| h.held && h.queue.is_some() == peer)
            .filter_map(HeldRow::last_tenth)
    };
    let above = held_last(false)
        .zip(held_last(true))
        .filter_map(|(ours, peer)| div(ours, peer));
    let what = "Last tenth of rounds (median) with a transaction held open elsewhere: this \
                outbox ÷ the peer queue";
    t.push(Rule::Reported.judge(what.into(), above, ratio));
    t
}

/// The soak: nothing lost or emitted twice without a kill to explain it, pickup latency,
/// and the memory of the drain process never killed.
pub(super) fn soak_targets(r: &Results) -> Vec<Target> {
    let broken = r
        .soak
        .iter()
        .map(|s| (s.lost + s.undelivered + s.never_emitted + s.unexplained_duplicates()) as f64);
    let what = "Soak (PostgreSQL, drains killed every few seconds, two server restarts): \
                entries lost, left undelivered, or emitted twice with no kill to explain it";
    let whole: Fmt = |x| format!("{x:.0}");
    let mut t = vec![wanted::SOAK_BROKEN.judge(what.into(), broken, whole)];
    let what = "Soak: pickup latency (enqueue returned → first emission), median, ms";
    t.push(Rule::Reported.judge(what.into(), r.soak.iter().map(|s| s.pickup_p50_ms), ms));
    let what = "Soak: pickup latency, 99th percentile, ms";
    t.push(Rule::Reported.judge(what.into(), r.soak.iter().map(|s| s.pickup_p99_ms), ms));
    let what = "Soak: resident memory of the drain process never killed, \
                last tenth of the run ÷ second tenth (median samples)";
    let growth = r.soak.iter().filter_map(SoakRow::rss_growth);
    t.push(wanted::SOAK_RSS_GROWTH.judge(what.into(), growth, ratio));
    t
}
