//! Numbered schema migrations, shipped as `.sql` files by each backend crate.

/// One schema migration: a version, and the SQL that applies and reverts it.
///
/// The SQL is a template: `{table}`, `{schema}`, `{schema_prefix}` and `{name}` are
/// replaced by [`crate::TableName::render`] before it runs. Nothing applies a migration
/// behind the host's back: the host calls the backend's `migrate` or prints the SQL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Migration {
    /// The version, counting from 1; applied in ascending order.
    pub version: i64,
    /// A short description.
    pub name: &'static str,
    /// The SQL that applies it.
    pub up: &'static str,
    /// The SQL that reverts it.
    pub down: &'static str,
}

/// The highest version of `migrations`, which a store requires the database to be at.
pub fn latest_version(migrations: &[Migration]) -> i64 {
    migrations.iter().map(|m| m.version).max().unwrap_or(0)
}
