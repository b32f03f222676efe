//! The portable claim store on sqlx: per-row optimistic concurrency with no
//! engine-specific locking, on SQLite (feature `portable-sqlite`) and PostgreSQL
//! (feature `portable-postgres`).
//!
//! It is written once ([`PortableStore`]) over a [`PortableBackend`] that holds what
//! differs between databases: placeholder style, column types, the clock expression, and
//! the mapping of driver errors. It uses the same table as the optimized stores
//! (`outbox_sqlite::migrate`, `outbox_postgres::migrate`), so a host can switch between
//! them without a migration.
//!
//! Cost: a claim of N rows takes 1 + 2N commands, a completion 2 per claim. The
//! optimized stores exist to beat that; this one stays as their baseline.
//!
//! ```no_run
//! # #[cfg(feature = "portable-sqlite")]
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use outbox_core::chrono::TimeDelta;
//! use outbox_core::portable::{PortableConfig, PortableStore};
//! use outbox_core::{ClaimRequest, ClaimStore, EmissionResult, NewEntry, Observed, OutboxStore};
//!
//! let pool = sqlx::SqlitePool::connect("sqlite:outbox.db").await?;
//! let store = Observed::new(PortableStore::sqlite(pool, PortableConfig::default()).await?);
//! store.enqueue(NewEntry::new("orders.created", b"{}".to_vec())).await?;
//! for claim in store
//!     .claim_pending(&ClaimRequest::new("worker-1", 10, TimeDelta::seconds(30)))
//!     .await?
//! {
//!     store.mark_delivered(&claim, EmissionResult::new()).await?;
//! }
//! # Ok(())
//! # }
//! ```

mod admin;
mod backend;
mod claim;
mod config;
mod contract;
#[cfg(feature = "portable-postgres")]
mod postgres;
mod rows;
mod save;
#[cfg(feature = "portable-sqlite")]
mod sqlite;
mod statements;
mod store;

pub use backend::PortableBackend;
pub use config::PortableConfig;
#[cfg(feature = "portable-postgres")]
pub use postgres::{PgBackend, PortablePgStore};
#[cfg(feature = "portable-sqlite")]
pub use sqlite::{PortableSqliteStore, SqliteBackend};
pub use store::PortableStore;
