//! The PostgreSQL outbox store.

mod error;
mod migrate;

pub use migrate::{
    check_schema, migrate, migrate_down, migration_script, migrations, required_version,
};
