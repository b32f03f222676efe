#![doc = include_str!("../README.md")]

mod admin;
mod batch_params;
mod claims;
mod complete;
mod config;
mod connection;
mod direct;
mod error;
mod migrate;
mod ordering;
mod portable;
mod row;
mod selection;
mod statements;
mod store;
mod writer;

pub use config::SqliteStoreConfig;
pub use direct::STATEMENT_TARGET;
pub use migrate::{
    check_schema, migrate, migrate_down, migrate_down_to, migration_connection, migration_script,
    migrations, migrator, required_version,
};
pub use ordering::{enable_ordered_claims, ordered_claims_script};
pub use portable::{portable_store, PortableSqliteStore, SqliteBackend};
pub use store::SqliteClaimStore;
pub use writer::SqliteWriter;
