//! What one claim batch and its completion cost in commands, counted outside the store:
//! by the counting proxy on PostgreSQL (`Query`/`Execute` messages are statements,
//! `Query`/`Sync` messages are round trips) and by sqlx's statement log on SQLite
//! (statements naming the table; `BEGIN`/`COMMIT` are not counted there).
//!
//! Runs last: the statement log is a process-wide tracing subscriber, installed here and
//! never removed, so it must not tax the timed scenarios.
//!
//! Not on MariaDB: the proxy reads only PostgreSQL's protocol, and the cost model's
//! invariant (one statement per optimized claim) is not the MariaDB store's, whose claim
//! is a short transaction of a fixed number of statements (a locking read and a lease
//! write).

use outbox_core::ClaimRequest;
use outbox_testkit::statement_log;

use super::{delivered, long_lease, progress, Ctx, PATHS};
use crate::load::{load, Rows};
use crate::results::{CostRow, Engine};
use crate::subject::{open, Link, Place};

/// Claims this many full batches per cell and averages.
const ROUNDS: u32 = 3;

/// Counts every (engine, path, batch) cell.
pub async fn run(ctx: &mut Ctx) {
    let plan = ctx.plan.clone();
    let engines = ctx.engines.clone();
    for engine in engines.into_iter().filter(|e| *e != Engine::Mysql) {
        for path in PATHS {
            for &batch in &plan.batches {
                // A table name of its own, so the statement log counts only this cell.
                let table = format!("outbox_cost_{}_{batch}", path.label());
                let Some(place) = Place::create(engine, &table).await else {
                    continue;
                };
                // One uncounted round first: a connection's first use of a statement
                // prepares it (one more round trip), which every later batch is spared.
                let rows = Rows::Pending {
                    count: u64::from(batch * (ROUNDS + 1)),
                    after: 0,
                };
                load(&place.location, rows, 64).await;
                let subject = open(&place.location, path, Link::counted(), 2).await;
                let log = (engine == Engine::Sqlite).then(|| statement_log::watch(&table));
                let count = || {
                    let statements = log.as_ref().map(|l| statement_log::read(l) as u64);
                    let traffic = subject.proxy.as_ref().map(|p| p.traffic());
                    (statements, traffic)
                };
                let request = ClaimRequest::new("bench-counter", batch, long_lease());
                let warm = subject.store.claim_pending(&request).await.expect("claim");
                subject
                    .store
                    .complete_batch(delivered(&warm))
                    .await
                    .expect("complete");
                let (mut claim_statements, mut claim_trips, mut done_statements) = (0, 0, 0);
                for _ in 0..ROUNDS {
                    let before = count();
                    let claims = subject.store.claim_pending(&request).await.expect("claim");
                    let after = count();
                    assert_eq!(claims.len(), batch as usize, "a full batch");
                    subject
                        .store
                        .complete_batch(delivered(&claims))
                        .await
                        .expect("complete");
                    let done = count();
                    let (s, t) = difference(before, after);
                    claim_statements += s;
                    claim_trips += t.unwrap_or(0);
                    done_statements += difference(after, done).0;
                }
                let per = |n: u64| n as f64 / f64::from(ROUNDS);
                let row = CostRow {
                    engine,
                    path,
                    batch,
                    statements: per(claim_statements),
                    round_trips: engine.has_network().then(|| per(claim_trips)),
                    completion_statements: per(done_statements),
                };
                progress(format_args!(
                    "costs {} {} batch {batch}: {} statements per claim batch",
                    engine.label(),
                    path.label(),
                    row.statements
                ));
                ctx.results.costs.push(row);
            }
        }
    }
}

type Count = (Option<u64>, Option<outbox_testkit::proxy::PgTraffic>);

/// Statements and round trips between two counts.
fn difference(before: Count, after: Count) -> (u64, Option<u64>) {
    match (before, after) {
        ((Some(a), _), (Some(b), _)) => (b - a, None),
        ((_, Some(a)), (_, Some(b))) => {
            let d = b.since(&a);
            (d.commands, Some(d.round_trips))
        }
        _ => panic!("a cost cell counted nothing"),
    }
}
