//! The engines the command serves, and which one serves a target: the one table that
//! names every engine module (they name only `backend`, never this file).

use std::sync::Arc;

use outbox_core::{AdminClaimStore, OutboxError, Result};

use crate::backend::{Engine, Target};

static ENGINES: &[&Engine] = &[
    &crate::engine_sqlite::ENGINE,
    &crate::engine_postgres::ENGINE,
    &crate::engine_sqlserver::ENGINE,
    &crate::engine_mysql::ENGINE,
];

impl Target {
    /// The engine serving this URL's scheme; refuses options it has no use for.
    pub(crate) fn engine(&self) -> Result<&'static Engine> {
        let engine = self.engine_by_scheme()?;
        if self.table.schema().is_some() && !engine.has_schemas {
            return Err(OutboxError::invalid(
                "--schema",
                format!(
                    "{} has no schemas: drop --schema (the table lives in the database file)",
                    engine.name
                ),
            ));
        }
        Ok(engine)
    }

    fn engine_by_scheme(&self) -> Result<&'static Engine> {
        let scheme = self.url.split_once(':').map(|(s, _)| s).unwrap_or_default();
        // `Server=host;Database=db;…` has no scheme: the shape says what it is.
        let key_values = !self.url.contains("://") && self.url.contains('=');
        ENGINES
            .iter()
            .copied()
            .find(|e| {
                e.schemes.iter().any(|s| s.eq_ignore_ascii_case(scheme))
                    || (key_values && e.connection_strings)
            })
            .ok_or_else(|| {
                let known: Vec<String> = ENGINES
                    .iter()
                    .flat_map(|e| e.schemes.iter().map(|s| format!("{s}://")))
                    .collect();
                OutboxError::invalid(
                    "database url",
                    format!(
                        "unsupported scheme {scheme:?} (expected one of: {}, or an ADO.NET string Server=…;Database=…)",
                        known.join(", ")
                    ),
                )
            })
    }

    /// Opens the store, observed (transition metric and warnings).
    pub(crate) async fn open(&self) -> Result<Arc<dyn AdminClaimStore>> {
        (self.engine()?.open)(self).await
    }

    /// Opens the store for commands that only read (stats, lists, show): a database the
    /// process cannot write can still be inspected.
    pub(crate) async fn open_for_reading(&self) -> Result<Arc<dyn AdminClaimStore>> {
        let reading = Self {
            reading: true,
            ..self.clone()
        };
        (self.engine()?.open)(&reading).await
    }
}
