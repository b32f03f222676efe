#![doc = include_str!("../README.md")]

mod admin;
mod batch_params;
mod bulk;
mod claims;
mod config;
mod connection;
mod error;
mod listener;
mod migrate;
mod ordering;
#[cfg(feature = "sqlx")]
mod portable;
mod row;
mod selection;
mod starts;
mod statement_mode;
mod statements;
mod store;
mod tls;
mod typed;
mod writer;

pub use bulk::COPY_FROM as BULK_COPY_FROM;
pub use config::{PgStoreConfig, DEFAULT_CALL_TIMEOUT};
pub use listener::{wake_channel, ListenSession, PgListener};
pub use migrate::{
    check_schema, migrate, migrate_down, migrate_down_to, migration_connection, migration_script,
    migrations, migrator, required_version,
};
pub use ordering::{enable_ordered_claims, ordered_claims_script};
#[cfg(feature = "sqlx")]
pub use portable::{portable_store, PgBackend, PortablePgStore};
pub use statement_mode::StatementMode;
pub use store::PgClaimStore;
pub use tls::{
    connect_config, connect_settings, PgConnectSettings, PgTls, SslMode, MULTI_HOST_CONNECT_TIMEOUT,
};
pub use writer::PgWriter;

/// The pool crate the store is built on, re-exported so hosts use the same version.
pub use deadpool_postgres;
/// The driver the store is built on, re-exported so hosts use the same version.
pub use tokio_postgres;
