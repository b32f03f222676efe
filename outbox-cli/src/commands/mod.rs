//! One module per subcommand.

mod dead_letters;
mod demo;
mod drain;
mod enqueue;
mod list;
mod migrate;
mod prune;
mod purge;
mod show;
mod stats;

use outbox_core::{Result, TableName};

use crate::args::{Cli, Command};
use crate::backend::Target;

/// Runs the parsed command line; the exit code on success (0, or a documented non-zero
/// code for a run that finished but must be flagged).
pub(crate) async fn run(cli: Cli) -> Result<u8> {
    let table = match &cli.schema {
        Some(schema) => TableName::in_schema(schema, &cli.table)?,
        None => TableName::new(&cli.table)?,
    };
    if let (Command::Demo { .. }, Some(url)) = (&cli.command, &cli.database_url) {
        return Err(outbox_core::OutboxError::invalid(
            "--database-url",
            format!(
                "the demo makes its own SQLite database, so {url:?} would not be used (choose its directory with --dir)"
            ),
        ));
    }
    let url = cli
        .database_url
        .clone()
        .or_else(|| std::env::var("OUTBOX_DATABASE_URL").ok())
        .unwrap_or_else(|| crate::args::DEFAULT_DATABASE_URL.to_owned());
    let listen = match (cli.listen_url, cli.no_listen) {
        (_, true) => crate::backend::Listen::Off,
        (Some(url), false) => crate::backend::Listen::Url(url),
        (None, false) => crate::backend::Listen::Same,
    };
    let target = Target {
        url,
        kind: cli.store,
        table,
        reading: false,
        call_timeout: cli.call_timeout,
        statement_mode: cli.statement_mode,
        listen: crate::backend::Listen::NotDraining,
        pool: crate::backend::PoolSize {
            needed: crate::backend::PoolSize::ONE_CALL_AT_A_TIME,
            cap: cli.pool_size,
        },
    };
    // Only drain can finish with a non-zero code; every other command is 0 when it succeeds.
    let done = match cli.command {
        Command::Drain(args) => {
            let target = Target { listen, ..target };
            return drain::run(&target, args).await;
        }
        Command::Migrate(args) => migrate::run(&target, args).await,
        Command::Enqueue(args) => enqueue::run(&target, args).await,
        Command::Stats(args) => stats::run(&target, args).await,
        Command::Show { id, json } => show::run(&target, id, json).await,
        Command::List(args) => list::list(&target, args).await,
        Command::Ui(args) => crate::ui::run(&target, args).await,
        Command::Requeue { status, which } => list::requeue(&target, status, which).await,
        Command::Purge { status, which, yes } => purge::run(&target, status, &which, yes).await,
        Command::DeadLetters(cmd) => dead_letters::run(&target, cmd).await,
        Command::Prune {
            delivered_older_than,
            dry_run,
            batch,
        } => prune::run(&target, delivered_older_than, batch, dry_run).await,
        Command::Demo {
            dir,
            orders,
            workers,
        } => demo::run(dir, orders, workers).await,
    };
    done.map(|()| 0)
}
