//! The `outbox` command.

/// Writes a line to standard output. A reader that went away (`outbox stats | head -1`)
/// is no reason to panic, so write errors are ignored.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// Like [`out!`] without the line end.
macro_rules! out_raw {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($arg)*);
    }};
}

mod args;
mod backend;
mod commands;
mod emitters;
mod engine_mysql;
mod engine_postgres;
mod engine_sqlite;
mod engine_sqlserver;
mod engines;
mod metrics;
mod progress;
mod route_holds;
mod signals;
mod ui;

use std::process::ExitCode;

use clap::Parser;

/// Exit codes, as `outbox --help` lists them.
mod exit {
    /// A runtime failure: the database, the emitter, the file system.
    pub(crate) const FAILURE: u8 = 1;
    /// A usage error: a bad argument or value (clap uses 2 for its own as well).
    pub(crate) const USAGE: u8 = 2;
    /// `drain --until-empty --fail-on-dead-letters` dead-lettered entries.
    pub(crate) const DEAD_LETTERS: u8 = 3;
    /// `drain --route-down-limit`: a route failed for longer than the limit.
    pub(crate) const ROUTE_DOWN: u8 = 4;
    /// `drain`: a migration contracted the schema past this release while it ran.
    pub(crate) const SCHEMA_REFUSED: u8 = 5;
    /// A second Ctrl-C or SIGTERM ended a graceful stop early.
    pub(crate) const FORCED: i32 = 130;
}

/// `n` and the noun, plural when it must be (`1 dead letter`, `2 dead letters`).
pub(crate) fn plural(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("{n} {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

fn main() -> ExitCode {
    let cli = args::Cli::parse();
    use std::io::IsTerminal as _;
    let filter = || {
        tracing_subscriber::EnvFilter::try_from_env("OUTBOX_LOG")
            // tiberius warns on every connection made with trustServerCertificate=true;
            // the SQL Server engine says it once instead (engine_sqlserver.rs).
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,tiberius=error"))
    };
    let logs = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter());
    match cli.log_format {
        args::LogFormat::Text => logs.with_ansi(std::io::stderr().is_terminal()).init(),
        args::LogFormat::Json => logs.json().with_ansi(false).init(),
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("outbox: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(commands::run(cli)) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("outbox: {}", outbox_core::error_chain(&e));
            if e.is_invalid_input() {
                ExitCode::from(exit::USAGE)
            } else {
                ExitCode::from(exit::FAILURE)
            }
        }
    }
}
