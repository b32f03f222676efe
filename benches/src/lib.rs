//! Benches of every outbox store on real engines, and the report they produce.
//!
//! One harness drives every engine (SQLite, PostgreSQL, MariaDB) and path: a
//! [`subject::Subject`] is a store (the portable per-row store or the engine's optimized
//! one) on a fresh table, reached directly or, on PostgreSQL, through the testkit's latency
//! proxy. The scenarios in [`scenarios`] measure
//! claims, races, drains, enqueue, the raw-SQL ceiling and scale; [`results`] holds what
//! they measured and [`report`] turns it into `REPORT.md` and its plots.
//!
//! `outbox-bench run --quick` is the smoke run CI does; `scripts/bench-report.sh` is the
//! full run that regenerates `benches/REPORT.md`.

pub mod brokers;
pub mod cpu;
pub mod invariants;
pub mod load;
pub mod location;
pub mod mariadb;
pub mod pg;
pub mod plan;
pub mod report;
pub mod results;
pub mod scenarios;
pub mod stats;
pub mod subject;
