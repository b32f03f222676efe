#![doc = include_str!("../README.md")]

mod admin;
mod batch_params;
mod binds;
mod bulk;
mod claims;
mod config;
mod connection;
mod enqueue;
mod error;
#[cfg(test)]
mod fixtures;
mod isolation;
mod migrate;
#[doc(hidden)]
pub mod offline;
mod params;
mod pool;
mod portable;
mod retry;
mod row;
mod selection;
mod starts;
mod statements;
mod store;
mod table;
mod writer;

pub use config::SqlServerStoreConfig;
pub use connection::{ConnectOptions, DEFAULT_CONNECT_TIMEOUT, DEFAULT_LOCK_TIMEOUT};
pub use error::{numbers, ServerError};
pub use migrate::{
    check_schema, migrate, migrate_down, migrate_down_to, migration_connection, migration_script,
    migrations, migrator, required_version,
};
pub use pool::{connect, connect_pool, ConnectionManager, SqlClient, SqlServerPool};
pub use portable::PortableSqlServerStore;
pub use store::SqlServerClaimStore;
pub use writer::SqlServerWriter;

/// The driver the store is built on, re-exported so hosts use the same version.
pub use tiberius;
