//! The portable claim store: per-row optimistic concurrency with no engine-specific
//! locking, the baseline every optimized store is measured against.
//!
//! It is written once ([`PortableStore`]) over a [`PortableBackend`] that holds what
//! differs between databases: placeholder style, column types, the clock expression, and
//! the driver's I/O. On sqlx one backend serves every engine, `SqlxBackend` (feature
//! `sqlx`), given the engine's `SqlxEngine`: `outbox_sqlite::SqliteBackend`,
//! `outbox_postgres::PgBackend` (that crate's `sqlx` feature) and
//! `outbox_mysql::MySqlBackend` are it. It uses
//! the same table as the optimized stores (`outbox_sqlite::migrate`,
//! `outbox_postgres::migrate`), so a host can switch between them without a migration.
//! The per-row steps themselves are [`crate::store_kit::per_row`], which SQL Server's
//! portable path runs too.
//!
//! Cost: a claim of N rows takes 1 + 2N commands, a completion 2 per claim. The
//! optimized stores exist to beat that; this one stays as their baseline.

mod admin;
mod backend;
mod claim;
mod config;
mod contract;
mod rows;
mod save;
#[cfg(feature = "sqlx")]
mod sqlx_backend;
mod statements;
mod store;

pub use backend::{ClockedEntry, Dialect, Placeholders, PortableBackend, SqlParam};
pub use config::PortableConfig;
#[cfg(feature = "sqlx")]
pub use sqlx_backend::{SqlxBackend, SqlxEngine, SqlxQuery, SqlxRow};
pub use store::PortableStore;
