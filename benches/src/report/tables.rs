//! The report's measured tables: the cost model beside its analytical floor, then one
//! table per scenario.

#[allow(clippy::wildcard_imports)]
use super::*;
use crate::results::{DrainOutcome, StatementRow};

fn cost(r: &Results, key: (Engine, StorePath, u32)) -> Option<&CostRow> {
    r.costs.iter().find(|c| (c.engine, c.path, c.batch) == key)
}

pub(super) fn cost_model(md: &mut String, r: &Results) {
    md.push_str(
        "## The cost model, measured\n\nThe portable store spends 1 + 2N commands on a claim \
         batch of N; the optimized stores spend one statement. With a round-trip latency L \
         and nothing else, the portable path claims at most N ÷ ((1 + 2N) · L) rows per \
         second: the floor below. At latency 0 there is no floor, only measurements.\n\n",
    );
    let engines = r.costs.iter().map(|c| c.engine);
    let engines = BTreeSet::from_iter(engines.chain(r.claims.iter().map(|c| c.engine)));
    if engines.is_empty() {
        md.push_str("_Not measured in this run._\n\n");
    }
    for e in engines {
        md.push_str(&format!("### {}\n\n", e.label()));
        let batches = r.costs.iter().filter(|c| c.engine == e).map(|c| c.batch);
        let batches = Vec::from_iter(BTreeSet::from_iter(batches));
        let stmts =
            |p| move |&b: &u32| or_dash(cost(r, (e, p, b)).map(|c| c.statements), per_batch);
        let trips =
            |p| move |&b: &u32| or_dash(cost(r, (e, p, b)).and_then(|c| c.round_trips), per_batch);
        let (portable, optimized) = (stmts(StorePath::Portable), stmts(StorePath::Optimized));
        let (portable_trips, optimized_trips) =
            (trips(StorePath::Portable), trips(StorePath::Optimized));
        let analytical = |&b: &u32| per_batch(portable_statements(b));
        let mut columns: Vec<Column<'_, u32>> = vec![
            ("batch N", &|b| b.to_string()),
            ("portable statements, measured", &portable),
            ("portable, analytical 1 + 2N", &analytical),
            ("optimized statements", &optimized),
        ];
        if e.has_network() {
            columns.push(("portable round trips", &portable_trips));
            columns.push(("optimized round trips", &optimized_trips));
        }
        if batches.is_empty() {
            md.push_str(&format!(
                "_Statement counts are not measured on {}: see \"How to read this\"._\n\n",
                e.label()
            ));
        } else {
            table(md, &batches, &columns);
        }

        let cells = r
            .claims
            .iter()
            .filter(|c| c.engine == e)
            .map(|c| (c.latency_ms, c.batch));
        let cells = Vec::from_iter(BTreeSet::from_iter(cells));
        let floor = |&(l, b): &(u32, u32)| {
            let floor = f64::from(b) * 1000.0 / (portable_statements(b) * f64::from(l));
            if l == 0 {
                "—".into()
            } else {
                rate(floor)
            }
        };
        let measured = |p| move |&(l, b): &(u32, u32)| or_dash(claim_rate(r, (e, p, b, l)), rate);
        let (portable, optimized) = (
            measured(StorePath::Portable),
            measured(StorePath::Optimized),
        );
        let vs = |&(l, b): &(u32, u32)| or_dash(claim_ratio(r, e, b, l), ratio);
        let columns: [Column<'_, (u32, u32)>; 6] = [
            ("latency ms", &|c| c.0.to_string()),
            ("batch N", &|c| c.1.to_string()),
            ("portable floor, claims/s", &floor),
            ("portable measured, claims/s", &portable),
            ("optimized measured, claims/s", &optimized),
            ("optimized ÷ portable", &vs),
        ];
        table(md, &cells, &columns);
    }
}

pub(super) fn all(md: &mut String, r: &Results) {
    md.push_str("## Claims, one worker\n\n");
    let mut claims = r.claims.clone();
    claims.sort_by_key(|c| (c.engine, c.latency_ms, c.batch, c.path));
    let vs = |c: &ClaimRow| {
        let ratio_here = claim_ratio(r, c.engine, c.batch, c.latency_ms);
        or_dash(ratio_here.filter(|_| c.path == StorePath::Optimized), ratio)
    };
    table(
        md,
        &claims,
        &[
            ("engine", &|c| c.engine.label().into()),
            ("path", &|c| c.path.label().into()),
            ("batch", &|c| c.batch.to_string()),
            ("latency ms", &|c| c.latency_ms.to_string()),
            ("claims/s", &|c| rate(c.claims_per_s)),
            ("p50 ms", &|c| ms(c.p50_ms)),
            ("p95 ms", &|c| ms(c.p95_ms)),
            ("optimized ÷ portable", &vs),
        ],
    );

    md.push_str("## Races\n\n");
    table(
        md,
        &r.races,
        &[
            ("engine", &|x| x.engine.label().into()),
            ("path", &|x| x.path.label().into()),
            ("batch", &|x| x.batch.to_string()),
            ("latency ms", &|x| x.latency_ms.to_string()),
            ("workers", &|x| x.workers.to_string()),
            ("claimed", &|x| count(x.claimed)),
            ("seconds", &|x| format!("{:.2}", x.seconds)),
            ("claims/s", &|x| rate(x.claims_per_s)),
            ("p50 ms", &|x| ms(x.p50_ms)),
            ("p95 ms", &|x| ms(x.p95_ms)),
            ("p99 ms", &|x| ms(x.p99_ms)),
            ("duplicate live leases", &|x| count(x.duplicate_live_leases)),
            ("lost completions", &|x| count(x.lost_completions)),
            ("longest overtaken wait ms", &|x| {
                ms(x.longest_overtaken_wait_ms)
            }),
        ],
    );

    md.push_str("## Drain end to end\n\n");
    table(
        md,
        &r.drains,
        &[
            ("engine", &|d| d.engine.label().into()),
            ("path", &|d| d.path.label().into()),
            ("workers", &|d| d.workers.to_string()),
            ("batch", &|d| d.batch.to_string()),
            ("latency ms", &|d| d.latency_ms.to_string()),
            ("backlog", &|d| count(d.backlog)),
            ("delivered", &|d| count(d.outcome.delivered)),
            ("entries/s", &|d| rate(d.outcome.entries_per_s)),
            ("CPU µs/entry", &|d| cpu(&d.outcome)),
            ("server CPU µs/entry", &|d| server_cpu(&d.outcome)),
            ("peak RSS MiB", &|d| mib(d.outcome.peak_rss_mib)),
            ("optimized ÷ portable", &|d| {
                or_dash(drain_ratio(r, d), ratio)
            }),
        ],
    );

    md.push_str("## Claiming ahead\n\n");
    md.push_str(
        "The optimized drain on identical fresh backlogs: one batch at a time \
         (`claim_ahead(false)`), one batch claimed ahead while the current one is emitted \
         and recorded (`batches_ahead(1)`), and the default (two batches ahead, and two \
         recordings at once, where the store takes concurrent writes; on SQLite one batch \
         ahead only while emissions are slow or no other writer waits for the lock).\n\n",
    );
    table(
        md,
        &r.overlap,
        &[
            ("engine", &|o| o.engine.label().into()),
            ("workers", &|o| o.workers.to_string()),
            ("batch", &|o| o.batch.to_string()),
            ("latency ms", &|o| o.latency_ms.to_string()),
            ("backlog", &|o| count(o.backlog)),
            ("one batch at a time, entries/s", &|o| {
                rate(o.one_at_a_time.entries_per_s)
            }),
            ("one batch ahead, entries/s", &|o| {
                o.one_ahead
                    .as_ref()
                    .map_or_else(|| "—".into(), |a| rate(a.entries_per_s))
            }),
            ("the default, entries/s", &|o| rate(o.ahead.entries_per_s)),
            ("CPU µs/entry", &|o| cpu(&o.ahead)),
            ("server CPU µs/entry", &|o| server_cpu(&o.ahead)),
            ("default ÷ one at a time", &|o| {
                or_dash(
                    div(o.ahead.entries_per_s, o.one_at_a_time.entries_per_s),
                    ratio,
                )
            }),
            ("default ÷ one ahead", &|o| {
                or_dash(
                    o.one_ahead
                        .as_ref()
                        .and_then(|a| div(o.ahead.entries_per_s, a.entries_per_s)),
                    ratio,
                )
            }),
        ],
    );

    md.push_str("## Flow against the emitter\n\n");
    md.push_str(
        "One optimized drain worker against an emitter that takes its time: 5 ms per entry, \
         or 5 ms with one entry in a hundred taking 200 ms. The ideal keeps every \
         concurrency slot busy: concurrency ÷ mean emission time, nominal (from the asked \
         times) and measured (a timer sleeps at least what it is asked, often a fraction \
         of a millisecond more). The rate runs to the emission that reached the cell's \
         count, so a 200 ms emission still under way at the end does not weigh on it.\n\n",
    );
    table(
        md,
        &r.flow,
        &[
            ("engine", &|f| f.engine.label().into()),
            ("concurrency", &|f| f.concurrency.to_string()),
            ("batch", &|f| f.batch.to_string()),
            ("emission", &|f| f.emission.clone()),
            ("delivered", &|f| count(f.outcome.delivered)),
            ("entries/s", &|f| rate(f.outcome.entries_per_s)),
            ("CPU µs/entry", &|f| cpu(&f.outcome)),
            ("server CPU µs/entry", &|f| server_cpu(&f.outcome)),
            ("measured emission ms", &|f| {
                f.outcome
                    .mean_emission_ms
                    .map_or_else(|| "—".into(), |m| format!("{m:.2}"))
            }),
            ("÷ nominal ideal", &|f| {
                or_dash(div(f.outcome.entries_per_s, f.ideal_per_s), ratio)
            }),
            ("÷ measured ideal", &|f| {
                or_dash(
                    f.measured_ideal_per_s()
                        .and_then(|i| div(f.outcome.entries_per_s, i)),
                    ratio,
                )
            }),
        ],
    );

    md.push_str("## Into brokers\n\n");
    md.push_str(
        "One optimized drain worker (batch 100, 32 emissions in flight) on identical \
         backlogs, into the noop emitter and into the local brokers: NATS JetStream \
         (file-backed stream, delivered on the PubAck), RabbitMQ (durable queue, \
         persistent messages, delivered on the publisher confirm) and Kafka (tansu, a \
         Kafka-API broker with in-memory storage, a topic of three partitions, delivered \
         on the acknowledgement with `acks=all`).\n\n",
    );
    table(
        md,
        &r.brokers,
        &[
            ("engine", &|b| b.engine.label().into()),
            ("emitter", &|b| b.emitter.clone()),
            ("delivered", &|b| count(b.outcome.delivered)),
            ("entries/s", &|b| rate(b.outcome.entries_per_s)),
            ("CPU µs/entry", &|b| cpu(&b.outcome)),
            ("server CPU µs/entry", &|b| server_cpu(&b.outcome)),
            ("÷ noop", &|b| {
                let noop = r
                    .brokers
                    .iter()
                    .find(|n| n.engine == b.engine && n.emitter == "noop");
                or_dash(
                    noop.and_then(|n| div(b.outcome.entries_per_s, n.outcome.entries_per_s)),
                    ratio,
                )
            }),
        ],
    );

    md.push_str(
        "The same brokers with no outbox in front, on a destination of their own, as many \
         messages of the same size: the project's emitter called directly (32 at a time), \
         and the client library alone (`async-nats`, `lapin`, `rskafka`: persistent, \
         acknowledged, a fresh message id each; on Kafka one record a request) at the \
         drain's 32 in flight and at 256. A drain below noop \
         but near the client alone at 32 is held by the broker at that depth, not by the \
         outbox or the emitter.\n\n",
    );
    let client_32 = |b: &BrokerCeilingRow| {
        r.broker_ceilings
            .iter()
            .find(|c| c.broker == b.broker && c.publisher == "client" && c.in_flight == 32)
            .map(|c| c.per_s)
    };
    table(
        md,
        &r.broker_ceilings,
        &[
            ("broker", &|b| b.broker.clone()),
            ("publisher", &|b| format!("{} alone", b.publisher)),
            ("in flight", &|b| b.in_flight.to_string()),
            ("messages", &|b| count(b.messages)),
            ("payload bytes", &|b| count(u64::from(b.payload_bytes))),
            ("messages/s", &|b| rate(b.per_s)),
            ("÷ client alone at 32", &|b| {
                or_dash(client_32(b).and_then(|c| div(b.per_s, c)), ratio)
            }),
        ],
    );

    md.push_str("## Per-key order\n\n");
    md.push_str(
        "The same keyed backlog (entries round robin over the keys), drained by two \
         optimized workers at batch 100 into the noop emitter, unordered on a table as \
         `outbox migrate` leaves it, and in key order (`DrainOptions::ordered`) on one \
         prepared with `outbox migrate --ordered`. In key order a claim takes key runs of up \
         to 10 (the drain's default `key_run`): a key's head and the entries right behind it, \
         emitted one after the other; one key is held by one claim at a time, so at 10 keys \
         one worker's batch holds every key and the other worker finds none free until it \
         is done. A cell lasts a second or two, so each is run in rounds (three in the \
         report), the two orders side by side in each: the row shows the median round, every \
         round's rate in run order, and the median of the rounds' ordered ÷ unordered \
         ratios, each round against the one beside it.\n\n",
    );
    table(
        md,
        &r.ordered,
        &[
            ("engine", &|o| o.engine.label().into()),
            ("keys", &|o| count(o.keys)),
            ("order", &|o| {
                if o.ordered { "per key" } else { "none" }.into()
            }),
            ("backlog", &|o| count(o.backlog)),
            ("delivered", &|o| count(o.outcome.delivered)),
            ("entries/s", &|o| rate(o.outcome.entries_per_s)),
            ("rounds, entries/s", &|o| {
                each_or_dash(&o.rounds_per_s, rate)
            }),
            ("CPU µs/entry", &|o| cpu(&o.outcome)),
            ("server CPU µs/entry", &|o| server_cpu(&o.outcome)),
            ("÷ unordered", &|o| {
                or_dash(o.cost_of_order(&r.ordered), ratio)
            }),
        ],
    );

    md.push_str("## Statement modes\n\n");
    md.push_str(
        "The optimized PostgreSQL drain into the noop emitter, on identical \
         fresh backlogs: named statements (prepared once per connection, the default), \
         unnamed ones (`statement_mode=unnamed`: each statement parsed and planned on every \
         call, as a transaction-mode pooler needs) on the same direct connection, and \
         unnamed through PgBouncer in transaction mode keeping two server connections.\n\n",
    );
    let modes: Vec<(&StatementRow, &str, String, &DrainOutcome)> = r
        .statements
        .iter()
        .flat_map(|s| {
            let pooler = format!("PgBouncer, {} server connections", s.server_connections);
            [
                Some((s, "named", "direct".to_owned(), &s.named)),
                Some((s, "unnamed", "direct".to_owned(), &s.unnamed)),
                s.pooled.as_ref().map(|p| (s, "unnamed", pooler, p)),
            ]
        })
        .flatten()
        .collect();
    table(
        md,
        &modes,
        &[
            ("workers", &|m| m.0.workers.to_string()),
            ("batch", &|m| m.0.batch.to_string()),
            ("statements", &|m| m.1.into()),
            ("connection", &|m| m.2.clone()),
            ("backlog", &|m| count(m.0.backlog)),
            ("delivered", &|m| count(m.3.delivered)),
            ("entries/s", &|m| rate(m.3.entries_per_s)),
            ("CPU µs/entry", &|m| cpu(m.3)),
            ("server CPU µs/entry", &|m| server_cpu(m.3)),
            ("÷ named, direct", &|m| {
                or_dash(div(m.3.entries_per_s, m.0.named.entries_per_s), ratio)
            }),
        ],
    );

    md.push_str("## Enqueue\n\n");
    table(
        md,
        &r.enqueues,
        &[
            ("engine", &|e| e.engine.label().into()),
            ("path", &|e| e.path.label().into()),
            ("entries per call", &|e| count(e.per_call.into())),
            ("payload bytes", &|e| {
                if e.payload_bytes == 0 {
                    "—".into()
                } else {
                    count(e.payload_bytes.into())
                }
            }),
            ("entries", &|e| count(e.entries)),
            ("seconds", &|e| format!("{:.2}", e.seconds)),
            ("entries/s", &|e| rate(e.entries_per_s)),
        ],
    );
    if !r.copies.is_empty() {
        md.push_str(
            "The same small rows loaded by the engine's own bulk loader into a fresh table \
             of the store's schema (triggers and indexes included), beside the optimized \
             bulk enqueue of 1,000 per call. On PostgreSQL that is `psql \\copy` from a \
             CSV file, as an operator would load one, in one transaction; the store \
             streams the binary format, a transaction per call. The time includes \
             `psql`'s start and connection (milliseconds against seconds).\n\n",
        );
        table(
            md,
            &r.copies,
            &[
                ("engine", &|c| c.engine.label().into()),
                ("method", &|c| c.method.clone()),
                ("payload bytes", &|c| count(c.payload_bytes.into())),
                ("entries", &|c| count(c.entries)),
                ("seconds", &|c| format!("{:.2}", c.seconds)),
                ("entries/s", &|c| rate(c.entries_per_s)),
                ("bulk enqueue ÷ this", &|c| {
                    or_dash(copy_ratio(r, c), ratio)
                }),
            ],
        );
    }

    md.push_str("## Raw-SQL ceiling\n\n");
    md.push_str(
        "The raw figure is the store's own SQL with no library code: `pgbench` on \
         PostgreSQL, a loop on one connection on SQLite (`rusqlite`) and MariaDB (sqlx: \
         `BEGIN`, the locking read of `claim_pending.sql`, the lease write of \
         `lease_rows.sql`, `COMMIT`, then `complete_batch.sql` in a transaction). The \
         store's own calls run the same loop through the store (`claim_next`, then \
         `complete_batch`) with no drain around them; on SQLite the store runs them on a \
         `rusqlite` connection of its own, and the same loop on sqlx (the pool's driver) \
         is shown for comparison. Both loops wait for each step; the \
         drain, where the store allows concurrent writes (PostgreSQL, MariaDB), claims the \
         next batch on another connection while the current one is emitted and completed, \
         so on MariaDB, whose commits wait for the log flush, it can beat the raw loop. \
         Each cell runs in rounds, the raw loop and the drain one after the other on fresh \
         copies of the backlog, which goes first alternating; a row shows the round of \
         median drain ÷ raw (its rates and CPU figures), and every round's ratio.\n\n",
    );
    table(
        md,
        &r.ceilings,
        &[
            ("engine", &|c| c.engine.label().into()),
            ("method", &|c| c.method.clone()),
            ("backlog", &|c| count(c.backlog)),
            ("payload bytes", &|c| {
                if c.payload_bytes == 0 {
                    "—".into()
                } else {
                    count(c.payload_bytes.into())
                }
            }),
            ("batch", &|c| c.batch.to_string()),
            ("clients", &|c| c.clients.to_string()),
            ("raw rows/s", &|c| rate(c.raw_rows_per_s)),
            ("same loop on sqlx, rows/s", &|c| {
                or_dash(c.driver_rows_per_s, rate)
            }),
            ("store's own calls, rows/s", &|c| {
                or_dash(c.store_rows_per_s, rate)
            }),
            ("drain entries/s", &|c| rate(c.drain.entries_per_s)),
            ("drain ÷ raw", &|c| or_dash(ceiling_ratio(c), ratio)),
            ("drain ÷ raw, each round", &|c| {
                each_or_dash(&c.round_ratios, ratio)
            }),
            ("raw client CPU µs/entry", &|c| {
                or_dash(c.raw_cpu_us_per_entry, micros)
            }),
            ("raw server CPU µs/entry", &|c| {
                or_dash(c.raw_server_cpu_us_per_entry, micros)
            }),
            ("drain CPU µs/entry", &|c| cpu(&c.drain)),
            ("drain server CPU µs/entry", &|c| server_cpu(&c.drain)),
            ("server CPU, drain ÷ raw", &|c| {
                or_dash(ceiling_server_cpu_ratio(c), ratio)
            }),
        ],
    );
    super::ceiling_split::render(md, r);

    md.push_str(
        "## Scale\n\nOn PostgreSQL every case runs on a table never analyzed (its autovacuum \
         off, so it stays so) and again, suffixed `-analyzed`, on one vacuumed and analyzed \
         after the load with autovacuum left on, as a busy table is in production; each is \
         compared with the clean backlog of the same statistics. Every load ends with its \
         engine's flush (`CHECKPOINT` on PostgreSQL, `wal_checkpoint(TRUNCATE)` on SQLite, \
         `FLUSH TABLES … FOR EXPORT` on MariaDB), so the timed drain does not pay for the \
         load's writes. On SQLite \
         and MariaDB the raw loop clears the same number of rows of an identical table with \
         the store's statements on one connection.\n\n",
    );
    table(
        md,
        &r.scale,
        &[
            ("engine", &|s| s.engine.label().into()),
            ("case", &|s| s.case.clone()),
            ("description", &|s| s.description.clone()),
            ("pending", &|s| count(s.pending)),
            ("delivered", &|s| count(s.drain.delivered)),
            ("entries/s", &|s| rate(s.drain.entries_per_s)),
            ("CPU µs/entry", &|s| cpu(&s.drain)),
            ("server CPU µs/entry", &|s| server_cpu(&s.drain)),
            ("÷ pending-10k (same statistics)", &|s| {
                or_dash(scale_ratio(r, s.engine, &s.case), ratio)
            }),
            ("analyzed ÷ never", &|s| {
                or_dash(analyzed_ratio(r, s.engine, &s.case), ratio)
            }),
            ("raw loop rows/s", &|s| or_dash(s.raw_rows_per_s, rate)),
            ("raw ÷ its pending-10k", &|s| {
                or_dash(raw_scale_ratio(r, s.engine, &s.case), ratio)
            }),
            ("peak RSS MiB", &|s| mib(s.drain.peak_rss_mib)),
        ],
    );

    held(md, r);
    soak(md, r);
    reading(md, r);

    md.push_str("## Plots\n\n![claims/s against batch](claims.svg)\n\n");
    md.push_str("![drain rate against backlog](scale.svg)\n\n");
}

/// `outbox stats`, live and exact, on the same live rows with and without history.
fn reading(md: &mut String, r: &Results) {
    md.push_str(
        "## Reading the outbox\n\nWhat `outbox stats` costs (and the drain's metrics \
         sampler and the dashboard, which take the live form): two tables per engine hold \
         the same pending entries, one alone, one behind a delivered history. The live \
         stats count every status but delivered through the indexes that hold them alone \
         and take delivered from the engine's row count (PostgreSQL's and MariaDB's \
         estimates; SQLite's count kept by triggers, exact); the full count \
         (`outbox stats --exact`) reads every row. Medians of calls made one at a time on \
         one connection; PostgreSQL's tables vacuumed and analyzed after the load, as \
         autovacuum leaves them. On SQLite both reads touch the same rows, but the small \
         file lies whole inside the store's memory-mapped window (256 MiB by default) \
         while the live rows of the large one sit at its end, past the window, and come \
         through the page cache: SQLite's ratio is mostly that difference, and it moves \
         from run to run with what the OS has cached.\n\n",
    );
    table(
        md,
        &r.reading,
        &[
            ("engine", &|x| x.engine.label().into()),
            ("pending", &|x| count(x.live)),
            ("delivered", &|x| count(x.delivered)),
            ("live stats ms", &|x| ms(x.live_ms)),
            ("÷ no history", &|x| {
                or_dash(reading_ratio(r, x, |y| y.live_ms), ratio)
            }),
            ("exact ms", &|x| ms(x.exact_ms)),
            ("÷ no history ", &|x| {
                or_dash(reading_ratio(r, x, |y| y.exact_ms), ratio)
            }),
            ("delivered, live", &|x| {
                let n = count(x.delivered_read);
                if x.delivered_estimated {
                    format!("{n} (estimate)")
                } else {
                    n
                }
            }),
            ("delivered, exact", &|x| count(x.delivered_exact)),
        ],
    );
}

/// Drain rounds with and without a transaction held open on another connection.
fn held(md: &mut String, r: &Results) {
    md.push_str(
        "## A snapshot held elsewhere\n\nRound after round of fresh pending entries, loaded \
         and drained (2 workers, batch 100, no-op emitter) on one table for a fixed time: \
         once with nothing else open, once with a repeatable-read transaction held open on \
         another connection from the start, so no row version the drain leaves dead can \
         be removed. The table is vacuumed after every round in both runs, besides what \
         autovacuum does, so both are vacuumed at the same points. Each round's drain is a \
         new process, as after a deploy or a restart. Single rounds are noisy: each run is \
         summed up by the median round of its first tenth and of its last tenth. A peer \
         queue runs the same rounds on the same server, in a database of its own \
         (`benches/peers/`: pgqueuer, two new consumers per round on their own \
         connections, dequeuing 100 at a time into a handler that does nothing, its \
         completions committed before a round's clock stops).\n\n",
    );
    table(
        md,
        &r.held,
        &[
            ("engine", &|h| h.engine.label().into()),
            ("queue", &|h| {
                h.queue.clone().unwrap_or_else(|| "this outbox".into())
            }),
            ("held open", &|h| if h.held { "yes" } else { "no" }.into()),
            ("seconds", &|h| format!("{:.0}", h.seconds)),
            ("rounds", &|h| h.rounds_per_s.len().to_string()),
            ("entries per round", &|h| count(h.round_entries)),
            ("first tenth of rounds, median entries/s", &|h| {
                or_dash(h.first_tenth(), rate)
            }),
            ("last tenth, median entries/s", &|h| {
                or_dash(h.last_tenth(), rate)
            }),
            ("last ÷ first", &|h| or_dash(h.last_over_first(), ratio)),
            ("dead rows at the end", &|h| {
                h.dead_rows.map_or_else(|| "—".into(), count)
            }),
        ],
    );
}

/// Soak runs: churn for a fixed time, then what was delivered, how late, and memory.
fn soak(md: &mut String, r: &Results) {
    md.push_str(
        "## Soak\n\nEntries enqueued one per transaction at a fixed rate while drain \
         processes (batch 50, each emission taking 20 ms) deliver them to a log, on a \
         PostgreSQL cluster of the scenario's own; every few seconds one drain process \
         is SIGKILLed and a new one started, and the server is restarted a third and two \
         thirds of the way through. Afterwards every row must be delivered and every \
         emission but an entry's last must come from a killed process. Pickup latency runs \
         from the enqueue call returning to the first emission; the memory is the resident \
         set of the one drain process that is never killed, at each tenth of the run.\n\n",
    );
    table(
        md,
        &r.soak,
        &[
            ("engine", &|s| s.engine.label().into()),
            ("minutes", &|s| format!("{:.1}", s.seconds / 60.0)),
            ("enqueue rate/s aimed", &|s| s.rate_per_s.to_string()),
            ("enqueue rate/s reached", &|s| {
                format!("{:.0}", s.enqueued as f64 / s.seconds)
            }),
            ("drains", &|s| s.workers.to_string()),
            ("lease s", &|s| {
                format!("{:.0}", s.lease_ms as f64 / 1_000.0)
            }),
            ("kills", &|s| s.kills.to_string()),
            ("restarts", &|s| s.restarts.to_string()),
            ("enqueued", &|s| count(s.enqueued)),
            ("enqueues failed", &|s| count(s.enqueue_failures)),
            ("rows delivered", &|s| count(s.rows - s.undelivered)),
            ("lost", &|s| count(s.lost + s.never_emitted)),
            ("duplicates (from kills)", &|s| {
                format!(
                    "{} ({})",
                    count(s.duplicates),
                    count(s.duplicates_from_kills)
                )
            }),
            ("pickup p50 / p99 / max ms", &|s| {
                format!(
                    "{:.0} / {:.0} / {:.0}",
                    s.pickup_p50_ms, s.pickup_p99_ms, s.pickup_max_ms
                )
            }),
            ("drained after s", &|s| format!("{:.1}", s.drained_after_s)),
            ("RSS MiB by tenth", &|s| {
                let tenths: Vec<String> = s
                    .rss_by_tenth_mib()
                    .iter()
                    .map(|m| format!("{m:.1}"))
                    .collect();
                tenths.join(", ")
            }),
            ("RSS last ÷ second tenth", &|s| {
                or_dash(s.rss_growth(), ratio)
            }),
        ],
    );
}
