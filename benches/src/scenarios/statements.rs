//! PostgreSQL's statement modes on identical fresh backlogs in one run: named statements
//! (prepared once per connection, the default) and unnamed ones (parsed on every call, as
//! a transaction-mode pooler needs) on a direct connection, and unnamed through a
//! PgBouncer in transaction mode with two server connections, the pooler the tests use.

use outbox_testkit::pgbouncer::PgBouncer;

use super::drain::{measure, DrainSpec};
use super::{progress, Ctx};
use crate::results::{Engine, StatementRow};

/// The cells: (workers, batch). Batch 1 is where a statement's parse weighs most.
const CELLS: [(usize, u32); 3] = [(1, 100), (2, 100), (1, 1)];

/// Server connections the pooler keeps.
const SERVER_CONNECTIONS: u32 = 2;

/// Measures each cell named direct, unnamed direct and unnamed pooled.
pub async fn run(ctx: &mut Ctx) {
    if !ctx.engines.contains(&Engine::Postgres) {
        return;
    }
    let plan = ctx.plan.clone();
    let url = match crate::pg::url() {
        Ok(url) => url,
        Err(why) => {
            ctx.skip(format!("statement modes: {why}"));
            return;
        }
    };
    let bouncer =
        match tokio::task::spawn_blocking(move || PgBouncer::start(&url, SERVER_CONNECTIONS))
            .await
            .expect("start the pooler")
        {
            Ok(b) => Some(b),
            Err(why) => {
                outbox_testkit::engines::unavailable(outbox_testkit::pgbouncer::ENGINE, &why);
                ctx.skip(format!("statement modes through PgBouncer: {why}"));
                None
            }
        };
    for (workers, batch) in CELLS {
        let backlog = plan.drain_entries + plan.drain_entries / 5;
        let mut ways = vec![(false, None), (true, None)];
        if let Some(b) = &bouncer {
            ways.push((true, Some(b.addr)));
        }
        let mut measured = Vec::new();
        for (unnamed, pooler) in ways {
            let Some(place) = ctx.loaded(Engine::Postgres, backlog).await else {
                return;
            };
            let spec = DrainSpec {
                unnamed,
                pooler,
                ..DrainSpec::new(
                    place.location.clone(),
                    workers,
                    batch,
                    plan.drain_entries,
                    plan.drain_budget,
                )
            };
            measured.push(measure(&spec).await);
        }
        let mut measured = measured.into_iter();
        let named = measured.next().expect("measured named");
        let unnamed = measured.next().expect("measured unnamed");
        let pooled = measured.next();
        progress(format_args!(
            "statements PostgreSQL {workers}w batch {batch}: {:.0}/s named, {:.0}/s unnamed, {} through PgBouncer",
            named.entries_per_s,
            unnamed.entries_per_s,
            pooled
                .as_ref()
                .map_or_else(|| "—".to_owned(), |p| format!("{:.0}/s", p.entries_per_s))
        ));
        ctx.results.statements.push(StatementRow {
            workers,
            batch,
            backlog,
            server_connections: SERVER_CONNECTIONS,
            named,
            unnamed,
            pooled,
        });
    }
}
