//! Where the service's data lives.

use outbox_core::TableName;

use crate::Error;

/// The database and the schema holding the service's two tables (`orders` and `outbox`).
#[derive(Debug, Clone)]
pub struct Settings {
    /// A PostgreSQL connection string (libpq URL or key-value form).
    pub database_url: String,
    /// The schema of the `orders` and `outbox` tables; created if missing.
    pub schema: String,
}

impl Settings {
    /// `DATABASE_URL` (default `postgres://postgres@127.0.0.1:5432/postgres`) and
    /// `ORDERS_SCHEMA` (default `orders_service`).
    pub fn from_env() -> Result<Self, Error> {
        let settings = Self {
            database_url: std::env::var("DATABASE_URL")
                .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into()),
            schema: std::env::var("ORDERS_SCHEMA").unwrap_or_else(|_| "orders_service".into()),
        };
        settings.outbox_table()?;
        Ok(settings)
    }

    /// The outbox table, `<schema>.outbox`.
    pub fn outbox_table(&self) -> Result<TableName, Error> {
        Ok(TableName::in_schema(&self.schema, "outbox")?)
    }

    /// `sql` with `{table}` replaced by the quoted, schema-qualified orders table and
    /// `{schema}` by the quoted schema.
    pub(crate) fn render(&self, sql: &str) -> Result<String, Error> {
        Ok(TableName::in_schema(&self.schema, "orders")?.render(sql))
    }
}
