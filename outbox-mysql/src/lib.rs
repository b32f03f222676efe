#![doc = include_str!("../README.md")]

mod admin;
mod batch_params;
mod claims;
mod complete;
mod config;
mod connection;
mod error;
mod migrate;
mod ordered;
mod portable;
mod row;
mod run_lengths;
mod selection;
mod statements;
mod store;
mod walks;
mod writer;

pub use config::MySqlStoreConfig;
pub use migrate::{
    check_schema, migrate, migrate_down, migrate_down_to, migration_connection, migration_script,
    migrations, migrator, required_version,
};
pub use portable::{portable_store, MySqlBackend, PortableMySqlStore};
pub use store::MySqlClaimStore;
pub use writer::MySqlWriter;
