//! The targets of the PostgreSQL store, the cost model, the races and the brokers.

use super::*;

/// PostgreSQL's targets, the statement counts, the races, and the brokers.
pub(super) fn targets(r: &Results) -> Vec<Target> {
    use Rule::{AtLeast, Reported};
    let pg = Engine::Postgres;
    let mut t = Vec::new();
    for l in [1, 5] {
        let what = format!(
            "Optimized ÷ portable claims/s, PostgreSQL, batch 100, {l} ms \
             (the design record asked 2×)"
        );
        t.push(wanted::PG_CLAIMS_OPTIMIZED_OVER_PORTABLE.judge(
            what,
            claim_ratio(r, pg, 100, l),
            ratio,
        ));
    }
    let (mut portable, mut optimized) = (r.costs.clone(), r.costs.clone());
    portable.retain(|c| c.path == StorePath::Portable);
    optimized.retain(|c| c.path == StorePath::Optimized);
    portable.sort_by_key(|c| c.batch);
    let all_one = optimized.iter().all(|c| c.statements == 1.0);
    let seen = Vec::from_iter(BTreeSet::from_iter(
        optimized.iter().map(|c| per_batch(c.statements)),
    ));
    t.push(exact(
        "Statements per claim batch, optimized stores",
        "exactly 1",
        seen,
        all_one,
    ));
    let all_hit = portable
        .iter()
        .all(|c| c.statements == portable_statements(c.batch));
    let shown = |c: &CostRow| format!("{} at N = {}", per_batch(c.statements), c.batch);
    let seen = portable.iter().map(shown).collect();
    t.push(exact(
        "Statements per claim batch, portable store",
        "1 + 2N",
        seen,
        all_hit,
    ));
    let n = r.races.len();
    let dup: u64 = r.races.iter().map(|x| x.duplicate_live_leases).sum();
    let lost: u64 = r.races.iter().map(|x| x.lost_completions).sum();
    for (what, total) in [("Duplicate live leases", dup), ("Lost completions", lost)] {
        let seen = (n > 0).then(|| format!("{} over {n} races", count(total)));
        let what = format!("{what} in every race");
        t.push(exact(&what, "0", seen.into_iter().collect(), total == 0));
    }

    let what = "Drain ÷ raw-SQL ceiling, PostgreSQL, 2 workers, batch 100, never-analyzed backlog";
    let two = |c: &&CeilingRow| c.engine == pg && c.clients == 2 && c.batch == 100;
    let v = r.ceilings.iter().filter(two).filter_map(ceiling_ratio);
    t.push(wanted::PG_DRAIN_OVER_CEILING.judge(what.into(), v, ratio));
    let what = "Server CPU per entry, PostgreSQL drain ÷ raw-SQL ceiling, same backlogs";
    let v = r
        .ceilings
        .iter()
        .filter(two)
        .filter_map(ceiling_server_cpu_ratio);
    t.push(wanted::PG_SERVER_CPU_OVER_CEILING.judge(what.into(), v, ratio));
    let what = "Drain process CPU per entry, PostgreSQL, on the ceiling's backlog, µs";
    let v = r
        .ceilings
        .iter()
        .filter(two)
        .filter_map(|c| c.drain.cpu_us_per_entry);
    t.push(wanted::PG_DRAIN_CPU_US.judge(what.into(), v, micros));
    for (case, what, rule) in wanted::PG_SCALE {
        let what = format!("{what}, PostgreSQL drain");
        t.push(rule.judge(what, scale_ratio(r, pg, case), ratio));
    }
    let what = "200k pending, analyzed ÷ never analyzed, PostgreSQL drain";
    let v = analyzed_ratio(r, pg, "pending-200k-analyzed");
    t.push(wanted::PG_ANALYZED_OVER_NEVER.judge(what.into(), v, ratio));
    for l in [1u32, 5] {
        let key = (pg, StorePath::Optimized, 1, 100, l);
        let at = |d: &&DrainRow| (d.engine, d.path, d.workers, d.batch, d.latency_ms) == key;
        let v = r.drains.iter().filter(at).map(|d| d.outcome.entries_per_s);
        // The proxy's timer is coarse: judge against the round trip it really gave.
        let trip = r
            .environment
            .proxy_round_trips
            .iter()
            .find(|p| p.latency_ms == l)
            .map_or(f64::from(l), |p| p.measured_ms.max(f64::from(l)));
        let what = format!(
            "Drain through {l} ms proxy (round trip measured {}), PostgreSQL, 1 worker, \
             batch 100, entries/s (0.8 × batch ÷ round trip)",
            ms(trip)
        );
        t.push(AtLeast(wanted::LATENCY_DRAIN_SHARE * 100.0 * 1_000.0 / trip).judge(what, v, rate));
    }
    let big = |s: &&ScaleRow| s.engine == pg && s.case == "pending-1m";
    let v = r.scale.iter().filter(big).map(|s| s.drain.peak_rss_mib);
    let what = "Drain peak RSS MiB, PostgreSQL, 1M backlog of 1 KiB payloads";
    t.push(wanted::PG_DRAIN_PEAK_RSS_MIB.judge(what.into(), v, mib));
    let small = |e: &&EnqueueRow| {
        (e.engine, e.path, e.per_call, e.payload_bytes) == (pg, StorePath::Optimized, 1_000, 64)
    };
    let v = r.enqueues.iter().filter(small).map(|e| e.entries_per_s);
    let what = "Bulk enqueue, PostgreSQL, 64 B entries in calls of 1,000 (1,000,000 of them in \
                the full run, as `outbox enqueue --count 1000000 --batch 1000`), entries/s";
    t.push(wanted::PG_BULK_ENQUEUE.judge(what.into(), v, rate));
    let what = "Bulk enqueue ÷ `psql \\copy` of the same rows, PostgreSQL, 64 B entries";
    let v = r
        .copies
        .iter()
        .filter(|c| c.engine == pg)
        .filter_map(|c| copy_ratio(r, c));
    t.push(wanted::PG_BULK_ENQUEUE_OVER_COPY.judge(what.into(), v, ratio));
    for l in [0u32, 1, 5] {
        let at = |o: &&OverlapRow| (o.engine, o.workers, o.latency_ms) == (pg, 1, l);
        let v = r
            .overlap
            .iter()
            .filter(at)
            .filter_map(|o| div(o.ahead.entries_per_s, o.one_at_a_time.entries_per_s));
        let what = format!(
            "Claiming ahead ÷ one batch at a time, PostgreSQL drain, 1 worker, batch 100, +{l} ms"
        );
        t.push(Reported.judge(what, v, ratio));
        let v = r.overlap.iter().filter(at).filter_map(|o| {
            let one = o.one_ahead.as_ref()?;
            div(o.ahead.entries_per_s, one.entries_per_s)
        });
        let what = format!(
            "Two batches ahead (the default) ÷ one, PostgreSQL drain, 1 worker, batch 100, +{l} ms"
        );
        t.push(Reported.judge(what, v, ratio));
    }
    t.extend(super::others::flow_targets(r));
    for engine in [Engine::Sqlite, Engine::Postgres, Engine::Mysql] {
        for broker in crate::brokers::BROKERS {
            let of = |name: &str| {
                r.brokers
                    .iter()
                    .find(|b| b.engine == engine && b.emitter == name)
                    .map(|b| b.outcome.entries_per_s)
            };
            let v = of(broker).zip(of("noop")).and_then(|(b, n)| div(b, n));
            let what = format!(
                "{} drain into {broker} ÷ into noop, 1 worker, batch 100, 32 in flight",
                engine.label()
            );
            t.push(wanted::BROKER_OVER_NOOP.judge(what, v, ratio));
        }
    }
    for broker in crate::brokers::BROKERS {
        let of = |publisher: &str, in_flight: usize| {
            r.broker_ceilings
                .iter()
                .find(|c| {
                    (c.broker.as_str(), c.publisher.as_str(), c.in_flight)
                        == (broker, publisher, in_flight)
                })
                .map(|c| c.per_s)
        };
        let client = of("client", 32);
        let what = format!("{broker} emitter alone ÷ client alone, 32 in flight, no outbox");
        let v = of("emitter", 32).zip(client).and_then(|(e, c)| div(e, c));
        t.push(Rule::Reported.judge(what, v, ratio));
        let what = format!("{broker} client alone, 256 in flight ÷ 32 in flight, no outbox");
        let v = of("client", 256).zip(client).and_then(|(d, c)| div(d, c));
        t.push(Rule::Reported.judge(what, v, ratio));
    }
    t
}
